"""An app that speaks the inspector's live protocol over a real socket, for the tests of the page
and the server: a `lists` store whose state is a list of items (steerable, unless told
otherwise) and a `settings` store that is read-only.

It does what the protocol asks of an app, simply: every commit is a `line` with its state; a
command is answered with one `ack`, and the commits it causes carry `"steered"`; `jump` takes the
state recorded after a line; `present`, `skip` and `unskip` replay the app's own actions, without
the skipped ones; `dispatch` decodes the action as the todo example's would, and says where it
is wrong; `pause` and `resume` stop and start the lines, and report what was not sent as a gap.
"""

import json
import socket
import threading
import time
import uuid
from datetime import datetime, timezone


def now():
    moment = datetime.now(timezone.utc)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


class Refused(Exception):
    pass


class FakeApp:
    def __init__(self, address, app="todo", session=None, pairing=None, steerable=True):
        self.host, port = address.rsplit(":", 1)
        self.host = self.host.strip("[]")
        self.port = int(port)
        self.app = app
        self.session = session or str(uuid.uuid4())
        self.pairing = pairing
        self.steerable = steerable
        self.lock = threading.Lock()
        self.n = 0
        self.items = []          # the state of lists: [{"id", "title", "isDone"}]
        self.next_id = 1
        self.own = []            # (n, action) of the app's own commits to lists
        self.skipped = set()
        self.states = {}         # n -> state of lists after line n
        self.paused = False
        self.unsent = None       # (from, count) while paused
        self.commands = []       # every command received
        self.socket = None
        self.reader = None

    # The connection.

    def connect(self):
        self.socket = socket.create_connection((self.host, self.port), timeout=10)
        self.file = self.socket.makefile("rb")
        hello = {"type": "hello", "protocol": 1, "app": self.app, "session": self.session, "pid": 4242,
                 "platform": "Linux", "next": self.n,
                 "stores": [{"label": "lists", "state": "TodoListState", "steerable": self.steerable},
                            {"label": "settings", "state": "SettingsState", "steerable": False}]}
        if self.pairing is not None:
            hello["pairing"] = self.pairing
        self.send(hello)
        answer = json.loads(self.file.readline() or b'{"type":"closed"}')
        if answer.get("type") != "welcome":
            self.socket.close()
            raise Refused(answer.get("reason") or answer.get("message") or answer.get("type"))
        self.socket.settimeout(None)
        self.reader = threading.Thread(target=self.read, daemon=True)
        self.reader.start()
        return answer

    def close(self):
        if self.socket:
            try:
                self.socket.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            self.socket.close()

    def send(self, message):
        data = (json.dumps(message, separators=(",", ":"), sort_keys=True) + "\n").encode()
        self.socket.sendall(data)

    def read(self):
        try:
            for line in self.file:
                message = json.loads(line)
                if message.get("type") == "command":
                    self.commands.append(message)
                    self.answer(message)
        except (OSError, ValueError):
            pass

    # The stores.

    def line(self, store, action, state, steered=None):
        fields = {"action": action, "durationNanoseconds": 2000, "outcome": "committed", "sequence": self.n + 1,
                  "state": state, "store": store, "time": now()}
        if steered:
            fields["steered"] = steered
        n = self.n
        self.n += 1
        if store == "lists":
            self.states[n] = json.loads(json.dumps(state))
        if self.paused:
            start, count = self.unsent or (n, 0)
            self.unsent = (start, count + 1)
            return n
        self.send({"type": "line", "n": n, "line": fields})
        return n

    def apply(self, items, action):
        name, payload = next(iter(action.items()))
        if name == "add":
            items.append({"id": self.next_id, "isDone": False, "title": payload["title"]})
            self.next_id += 1
        elif name == "remove":
            items[:] = [item for item in items if item["id"] != payload["id"]]
        elif name == "toggle":
            for item in items:
                if item["id"] == payload["id"]:
                    item["isDone"] = not item["isDone"]

    def state(self):
        return {"items": json.loads(json.dumps(self.items))}

    def commit(self, action):
        """The app's own action on lists."""
        with self.lock:
            self.apply(self.items, action)
            n = self.line("lists", action, self.state())
            self.own.append((n, action))
            return n

    def commit_settings(self, title):
        with self.lock:
            return self.line("settings", {"rename": {"title": title}}, {"dark": False, "title": title})

    def titles(self):
        with self.lock:
            return [item["title"] for item in self.items]

    def replay(self):
        saved = self.next_id
        self.next_id = 1
        items = []
        for n, action in self.own:
            if n not in self.skipped:
                self.apply(items, action)
        self.next_id = max(saved, self.next_id)
        return items

    @staticmethod
    def decode(action):
        """The action as the todo example's decoder reads it, or the error it says."""
        if not isinstance(action, dict) or len(action) != 1:
            return None, "TodoAction: expected an object with one case (add, remove, toggle)"
        name, payload = next(iter(action.items()))
        if name not in ("add", "remove", "toggle"):
            return None, f"TodoAction: no case {name!r}; expected add, remove or toggle"
        key, kind = ("title", str) if name == "add" else ("id", int)
        if not isinstance(payload, dict) or key not in payload:
            return None, f"TodoAction.{name}: the key {key!r} is missing"
        if not isinstance(payload[key], kind) or isinstance(payload[key], bool):
            expected = "a string" if kind is str else "a whole number"
            return None, f"at {name}.{key}: expected {expected}, found {json.dumps(payload[key])}"
        return action, None

    def answer(self, command):
        with self.lock:
            kind, store, number = command.get("command"), command.get("store"), command.get("id")
            if store != "lists" or not self.steerable:
                self.send({"type": "ack", "id": number, "ok": False, "error": f"the store {store} is read-only"})
                return
            outcome = None
            if kind == "jump":
                to = command.get("to")
                if to not in self.states:
                    self.send({"type": "ack", "id": number, "ok": False, "error": f"no state after #{to} of lists"})
                    return
                self.items = json.loads(json.dumps(self.states[to]["items"]))
                self.line("lists", {"restore": {}}, self.state(), steered="jump")
                outcome = f"jumped lists to after #{to}"
            elif kind in ("present", "skip", "unskip"):
                if kind == "skip":
                    self.skipped.add(command.get("at"))
                elif kind == "unskip":
                    self.skipped.discard(command.get("at"))
                self.items = self.replay()
                self.line("lists", {"restore": {}}, self.state(), steered=kind)
                outcome = {"present": "lists is back to the present", "skip": f"skipped #{command.get('at')}",
                           "unskip": f"unskipped #{command.get('at')}"}[kind]
            elif kind == "dispatch":
                action, error = self.decode(command.get("action"))
                if error:
                    self.send({"type": "ack", "id": number, "ok": False, "error": error})
                    return
                self.apply(self.items, action)
                n = self.line("lists", action, self.state(), steered="dispatch")
                self.own.append((n, action))
                outcome = f"dispatched {next(iter(action))} to lists"
            elif kind == "pause":
                self.paused = True
                outcome = "paused"
            elif kind == "resume":
                self.paused = False
                if self.unsent:
                    start, count = self.unsent
                    self.unsent = None
                    self.send({"type": "gap", "from": start, "count": count, "reason": "paused"})
                outcome = "resumed"
            elif kind == "import":
                lines = [line for line in command.get("lines", []) if line.get("store") == "lists" and "state" in line]
                if not lines:
                    self.send({"type": "ack", "id": number, "ok": False, "error": "no line of lists with a state"})
                    return
                self.items = json.loads(json.dumps(lines[-1]["state"]["items"]))
                self.line("lists", {"restore": {}}, self.state(), steered="import")
                outcome = f"imported {len(command['lines'])} lines: lists took the state of the last"
            else:
                self.send({"type": "ack", "id": number, "ok": False, "error": f"unknown command {kind}"})
                return
            self.send({"type": "ack", "id": number, "ok": True, "outcome": outcome})


def wait_until(condition, timeout=10.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.02)
    return condition()
