#!/usr/bin/env python3
"""Draws the time ratios of a flux-bench results file as an SVG bar chart (no dependencies).

    chart.py results.json --svg ratios.svg [--table results.md --readme README.md]

Per workload, two bars on a log scale: Flux / baseline and OpenCombine / baseline, with the
target as a tick. W9 compares bytes per observer. With --readme, the Markdown table in
--table replaces what stands between the results markers of the README.
"""

import argparse
import json
import math
from xml.sax.saxutils import escape

COLORS = {"flux": "#2f6fdf", "opencombine": "#c8553d", "target": "#222222"}


def rows(results):
    for workload in results["workloads"]:
        base = workload["results"].get("baseline")
        if base is None:
            continue
        if workload["id"] == "W9":
            key, label = "bytes", "bytes/observer"
            target = workload.get("bytesTarget")
            target = target / base[key]["median"] if target and base[key]["median"] else None
        else:
            key, label = "nanoseconds", "ns/" + workload["unit"]
            target = workload.get("ratioTarget")
        ratios = {}
        for name in ("flux", "opencombine"):
            result = workload["results"].get(name)
            if result and key in result and base[key]["median"]:
                ratios[name] = result[key]["median"] / base[key]["median"]
        yield workload["id"] + " " + workload["name"], label, ratios, target, workload.get("met")


def svg(results):
    data = list(rows(results))
    left, right, top, row_height, bar = 190, 40, 70, 46, 14
    width = 860
    plot = width - left - right
    height = top + row_height * len(data) + 60
    values = [v for _, _, ratios, target, _ in data for v in list(ratios.values()) + [target] if v]
    low = 10 ** math.floor(math.log10(min(values + [0.5])))
    high = 10 ** math.ceil(math.log10(max(values + [2])))

    def x(value):
        return left + plot * (math.log10(value) - math.log10(low)) / (math.log10(high) - math.log10(low))

    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" font-family="Helvetica, Arial, sans-serif" font-size="12">',
        f'<rect width="{width}" height="{height}" fill="white"/>',
        f'<text x="{left}" y="22" font-size="15" font-weight="bold">Relative to the hand-written baseline: '
        f"time per operation (W9: bytes per observer), log scale</text>",
        f'<text x="{left}" y="42" fill="#555">{escape(results.get("date", ""))} · '
        f'{escape(results.get("machine", ""))}</text>',
    ]
    decade = low
    while decade <= high * 1.0001:
        for step in (1, 2, 5):
            value = decade * step
            if low <= value <= high:
                gx = x(value)
                shade = "#bbb" if step == 1 else "#e4e4e4"
                out.append(f'<line x1="{gx:.1f}" y1="{top - 8}" x2="{gx:.1f}" '
                           f'y2="{top + row_height * len(data)}" stroke="{shade}"/>')
                out.append(f'<text x="{gx:.1f}" y="{top + row_height * len(data) + 16}" '
                           f'text-anchor="middle" fill="#555">{value:g}×</text>')
        decade *= 10
    one = x(1)
    out.append(f'<line x1="{one:.1f}" y1="{top - 8}" x2="{one:.1f}" '
               f'y2="{top + row_height * len(data)}" stroke="#222" stroke-width="1.5"/>')
    for index, (name, label, ratios, target, met) in enumerate(data):
        y = top + index * row_height
        out.append(f'<text x="{left - 10}" y="{y + 14}" text-anchor="end" font-weight="bold">'
                   f"{escape(name)}</text>")
        status = "" if met is None else ("target met" if met else "target missed")
        out.append(f'<text x="{left - 10}" y="{y + 29}" text-anchor="end" fill="#555">'
                   f"{escape(label)} {status}</text>")
        for offset, implementation in ((2, "flux"), (2 + bar + 2, "opencombine")):
            value = ratios.get(implementation)
            if not value:
                continue
            start, end = sorted((one, x(value)))
            out.append(f'<rect x="{start:.1f}" y="{y + offset}" width="{max(end - start, 1):.1f}" '
                       f'height="{bar}" fill="{COLORS[implementation]}"/>')
            out.append(f'<text x="{max(end, one) + 4:.1f}" y="{y + offset + 11}" fill="#333">'
                       f"{value:.2f}×</text>")
        if target:
            tx = x(target)
            out.append(f'<line x1="{tx:.1f}" y1="{y}" x2="{tx:.1f}" y2="{y + 2 * bar + 6}" '
                       f'stroke="{COLORS["target"]}" stroke-width="3"/>')
    legend_y = height - 18
    for position, (text, color) in enumerate(
        (("Flux / baseline", COLORS["flux"]), ("OpenCombine / baseline", COLORS["opencombine"]),
         ("Flux target", COLORS["target"]))):
        lx = left + position * 200
        out.append(f'<rect x="{lx}" y="{legend_y - 10}" width="12" height="12" fill="{color}"/>')
        out.append(f'<text x="{lx + 18}" y="{legend_y}">{escape(text)}</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"


def update_readme(readme_path, table, markers="results"):
    """Replaces what stands between the README's `<!-- MARKERS:start -->` and `:end` lines."""
    start, end = f"<!-- {markers}:start -->", f"<!-- {markers}:end -->"
    with open(readme_path, encoding="utf-8") as file:
        text = file.read()
    if start not in text or end not in text:
        raise SystemExit(f"{readme_path}: no {start} … {end} markers")
    before, rest = text.split(start, 1)
    _, after = rest.split(end, 1)
    with open(readme_path, "w", encoding="utf-8") as file:
        file.write(before + start + "\n" + table.strip() + "\n" + end + after)


def publish(description, draw, markers):
    """The command line of this script and of scaling.py: reads the results file, writes the
    chart that `draw` makes of it, and puts the table between the README's `markers`."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("results")
    parser.add_argument("--svg", required=True)
    parser.add_argument("--table")
    parser.add_argument("--readme")
    arguments = parser.parse_args()
    with open(arguments.results, encoding="utf-8") as file:
        results = json.load(file)
    with open(arguments.svg, "w", encoding="utf-8") as file:
        file.write(draw(results))
    if arguments.readme and arguments.table:
        with open(arguments.table, encoding="utf-8") as file:
            update_readme(arguments.readme, file.read(), markers)


if __name__ == "__main__":
    publish(__doc__.splitlines()[0], svg, markers="results")
