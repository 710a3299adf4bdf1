#!/usr/bin/env python3
"""Draws the curves of a flux-bench scaling file as a log-log SVG chart (no dependencies).

    scaling.py scaling.json --svg scaling.svg [--table scaling.md --readme README.md]

One panel per curve: the cost per item (median, nanoseconds) against the size, both on log
scales, for Flux, the baseline (where it has an equivalent) and OpenCombine. A flat line is
linear growth; the dashed line is the limit for Flux, twice its cost at size 100. With
--readme, the Markdown in --table replaces what stands between the scaling markers of the
README.
"""

import math
from xml.sax.saxutils import escape

from chart import publish

COLORS = {"flux": "#2f6fdf", "baseline": "#7a7a7a", "opencombine": "#c8553d"}
TITLES = {"flux": "Flux", "baseline": "baseline", "opencombine": "OpenCombine"}


def label(size):
    if size >= 1_000_000:
        return f"{size // 1_000_000}M"
    if size >= 1_000:
        return f"{size // 1_000}k"
    return str(size)


def panel(curve, left, top, width, height, reference, limit):
    series = {}
    for name, result in curve["results"].items():
        points = [(p["size"], p["nanoseconds"]["median"]) for p in result["points"] if p["nanoseconds"]["median"] > 0]
        if points:
            series[name] = points
    sizes = [s for points in series.values() for s, _ in points]
    values = [v for points in series.values() for _, v in points]
    flux = dict(series.get("flux", []))
    bound = flux[reference] * limit if reference in flux and max(sizes) > reference else None
    if bound:
        values.append(bound)
    if not values:
        return []
    x_low, x_high = math.log10(min(sizes)), math.log10(max(sizes))
    if x_high == x_low:
        x_high += 1
    y_low = math.floor(math.log10(min(values)))
    y_high = math.ceil(math.log10(max(values)))
    if y_high == y_low:
        y_high += 1

    def x(size):
        return left + width * (math.log10(size) - x_low) / (x_high - x_low)

    def y(value):
        return top + height - height * (math.log10(value) - y_low) / (y_high - y_low)

    out = [
        f'<text x="{left}" y="{top - 22}" font-weight="bold">{escape(curve["name"])}</text>',
        f'<text x="{left}" y="{top - 8}" fill="#555">ns per {escape(curve["unit"])} · size: '
        f'{escape(curve["sizeName"])}</text>',
        f'<rect x="{left}" y="{top}" width="{width}" height="{height}" fill="none" stroke="#bbb"/>',
    ]
    for exponent in range(y_low, y_high + 1):
        for step in (1, 2, 5):
            value = step * 10 ** exponent
            if 10 ** y_low <= value <= 10 ** y_high:
                gy = y(value)
                shade = "#ccc" if step == 1 else "#eee"
                out.append(f'<line x1="{left}" y1="{gy:.1f}" x2="{left + width}" y2="{gy:.1f}" stroke="{shade}"/>')
                if step == 1 or y_high - y_low == 1:
                    out.append(f'<text x="{left - 5}" y="{gy + 4:.1f}" text-anchor="end" fill="#555">{value:g}</text>')
    for size in sorted(set(sizes)):
        gx = x(size)
        out.append(f'<line x1="{gx:.1f}" y1="{top}" x2="{gx:.1f}" y2="{top + height}" stroke="#eee"/>')
        out.append(f'<text x="{gx:.1f}" y="{top + height + 15}" text-anchor="middle" fill="#555">{label(size)}</text>')
    if bound:
        out.append(f'<line x1="{x(reference):.1f}" y1="{y(bound):.1f}" x2="{x(max(sizes)):.1f}" y2="{y(bound):.1f}" '
                   f'stroke="{COLORS["flux"]}" stroke-dasharray="5,4"/>')
    for name, points in series.items():
        color = COLORS.get(name, "#555")
        path = " ".join(f"{x(s):.1f},{y(v):.1f}" for s, v in points)
        out.append(f'<polyline points="{path}" fill="none" stroke="{color}" stroke-width="2"/>')
        for s, v in points:
            out.append(f'<circle cx="{x(s):.1f}" cy="{y(v):.1f}" r="3" fill="{color}"/>')
    return out


def svg(results):
    curves = results["curves"]
    columns = 3
    panel_width, panel_height = 250, 170
    cell_width, cell_height = 320, 250
    rows = math.ceil((len(curves) + 1) / columns)
    width = columns * cell_width + 20
    height = 60 + rows * cell_height
    reference, limit = results.get("referenceSize", 100), results.get("growthLimit", 2)
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" font-family="Helvetica, Arial, sans-serif" font-size="12">',
        f'<rect width="{width}" height="{height}" fill="white"/>',
        f'<text x="20" y="22" font-size="15" font-weight="bold">Cost per item against size, log-log '
        f'(flat is linear growth)</text>',
        f'<text x="20" y="42" fill="#555">{escape(results.get("date", ""))} · '
        f'{escape(results.get("machine", ""))}</text>',
    ]
    for index, curve in enumerate(curves):
        left = 60 + (index % columns) * cell_width
        top = 100 + (index // columns) * cell_height
        out += panel(curve, left, top, panel_width, panel_height, reference, limit)
    index = len(curves)
    legend_x = 60 + (index % columns) * cell_width
    legend_y = 110 + (index // columns) * cell_height
    for position, name in enumerate(("flux", "baseline", "opencombine")):
        ly = legend_y + position * 24
        out.append(f'<line x1="{legend_x}" y1="{ly}" x2="{legend_x + 24}" y2="{ly}" stroke="{COLORS[name]}" '
                   f'stroke-width="2"/>')
        out.append(f'<text x="{legend_x + 32}" y="{ly + 4}">{TITLES[name]}</text>')
    ly = legend_y + 72
    out.append(f'<line x1="{legend_x}" y1="{ly}" x2="{legend_x + 24}" y2="{ly}" stroke="{COLORS["flux"]}" '
               f'stroke-dasharray="5,4"/>')
    out.append(f'<text x="{legend_x + 32}" y="{ly + 4}">limit for Flux: {limit:g}× its cost at {reference}</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    publish(__doc__.splitlines()[0], svg, markers="scaling")
