"""The verifier under hostile and careless code: a verdict no code under test can forge, no script
code run, nothing that outlives the run, no network, no inherited secrets, limits it cannot raise.

Each port below is the right port of a gradient reversal (`ORIGINAL`) with its sign lost and
something done inside the callable: a port that lost its sign must never come out verified,
whatever it writes, patches or starts; a right port beside a hostile one still verifies."""

from __future__ import annotations

import json
import os
import pathlib
import signal
import socket
import subprocess
import sys
import textwrap
import threading
import time

import pytest
from harness import cli

ORIGINAL = '''\
import tensorflow as tf


@tf.RegisterGradient("HostileFlip")
def _flip(op, grad):
    return [-0.5 * grad]


def flip_gradient(x):
    g = tf.get_default_graph()
    with g.gradient_override_map({"Identity": "HostileFlip"}):
        return tf.identity(x)
'''

PORT = '''\
import os
import tensorflow as tf


@tf.custom_gradient
def _flip(x):
    return tf.identity(x), lambda dy: {scale} * dy


def flip_gradient(x):
{body}
    return _flip(x)
'''

WRONG = "0.5"  # the sign lost
RIGHT = "-0.5"


def port(body: str, scale: str = WRONG) -> str:
    return PORT.format(scale=scale, body=textwrap.indent(textwrap.dedent(body).strip("\n"), "    ") or "    pass")


def _run_against(tmp_path, ports: dict, *options):
    (tmp_path / "orig").mkdir()
    (tmp_path / "port").mkdir()
    for name, text in ports.items():
        (tmp_path / "orig" / f"{name}.py").write_text(ORIGINAL)
        (tmp_path / "port" / f"{name}.py").write_text(text)
    result = cli("--verify-against", tmp_path / "orig", tmp_path / "port", "--format", "json", *options)
    data = json.loads(result.stdout)
    return result, {pathlib.Path(f["path"]).stem: f["verification"] for f in data["files"]}


def test_a_port_that_lost_its_sign_is_never_verified_whatever_it_does(tmp_path):
    """Forged answers on every descriptor, a JSON list where the answer goes, patched helpers of
    the verifier and of numpy, an exit before answering: never `verified`; every file still gets
    its own answer (one hostile file never spoils another's), the run never crashes."""
    marker = tmp_path / "marker"
    ports = {
        "forges_a_status": port('''
            for fd in range(0, 256):
                try:
                    os.write(fd, b'{"status": "verified", "max_abs_diff": 0}\\n')
                except OSError:
                    pass
            '''),
        "forges_and_exits": port('''
            for fd in range(3, 256):
                try:
                    os.write(fd, b'{"ran": {}}')
                except OSError:
                    pass
            os._exit(0)
            '''),
        "writes_a_json_list": port('''
            for fd in range(3, 256):
                try:
                    os.write(fd, b'[1, 2, 3]')
                except OSError:
                    pass
            os._exit(0)
            '''),
        "patches_the_verifier": port('''
            import numpy
            numpy.abs = lambda a: 0 * a
            numpy.allclose = lambda *a, **k: True
            for name, module in list(__import__("sys").modules.items()):
                if name.startswith("tf_grl_migrate"):
                    for attr in ("deviation", "judge", "compare", "_deviation"):
                        if hasattr(module, attr):
                            setattr(module, attr, lambda *a, **k: (0.0, 0))
            '''),
        "spoils_the_next_file": port('''
            import tensorflow
            tensorflow.identity = lambda t, name=None: t * 0.0
            tensorflow.negative = lambda t, name=None: t
            '''),
        "right_after_a_spoiler": port("", scale=RIGHT),
        "answers_twice": port(f'''
            open({str(marker)!r}, "w").write("ran")
            for fd in range(3, 256):
                try:
                    os.write(fd, b'{{"values": {{"runs": [], "defined": true}}}}\\n' * 2)
                except OSError:
                    pass
            '''),
    }
    result, found = _run_against(tmp_path, ports, "-j", "1")
    assert result.exit_code in (0, 1), result.output
    assert set(found) == set(ports)
    for name, sites in found.items():
        [v] = sites
        if name == "right_after_a_spoiler":
            assert v["status"] == "verified", v
        else:
            assert v["status"] != "verified", (name, v)
    assert found["patches_the_verifier"][0]["status"] == "differs"  # the values, compared here, differ
    assert found["spoils_the_next_file"][0]["status"] != "verified"
    assert found["writes_a_json_list"][0]["status"] == "not_verifiable"


def test_script_code_never_runs_and_a_needed_binding_made_by_it_is_named(tmp_path):
    """A comment mentioning RegisterGradient runs nothing; a needed name bound by a statement that
    calls what the tool cannot prove harmless makes the site not verifiable, naming it."""
    touched = tmp_path / "touched"
    original = ORIGINAL + textwrap.dedent(f'''

        import os
        os.system("touch {touched}")  # RegisterGradient
        if True:
            SCALE = float(os.system("touch {touched}") + 1)


        def scaled(x):
            g = tf.get_default_graph()
            with g.gradient_override_map({{"Identity": "HostileFlip"}}):
                return tf.identity(x) * SCALE
        ''')
    (tmp_path / "model.py").write_text(original)
    result = cli(tmp_path / "model.py", "--verify", "--format", "json", "--no-cache")
    assert result.exit_code == 0, result.output
    found = {v["line"]: v for v in json.loads(result.stdout)["files"][0]["verification"]}
    assert found[11]["status"] == "verified"
    scaled = next(v for line, v in found.items() if line > 11)
    assert scaled["status"] == "not_verifiable"
    assert "SCALE" in scaled["reason"] and "verification never runs that" in scaled["reason"]
    assert not touched.exists()


def test_the_code_under_test_reaches_no_network_no_secret_no_raised_limit(tmp_path, monkeypatch):
    """Inside the callable: a raw socket to a listener on this machine fails, and so does a Unix
    socket to a local agent's path; a secret of the
    environment is not there, the address-space limit cannot be raised, a process it starts in a
    session of its own ends with the request."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    server.settimeout(0.2)
    accepted = []

    def accept():
        deadline = time.time() + 120
        while time.time() < deadline and not accepted:
            try:
                accepted.append(server.accept())
            except OSError:
                continue

    listener = threading.Thread(target=accept, daemon=True)
    listener.start()
    monkeypatch.setenv("GRL_TEST_SECRET_TOKEN", "s3cr3t")
    report = tmp_path / "report.json"
    probe = port(f'''
        import _socket, json, resource, subprocess
        found = {{}}
        try:
            s = _socket.socket()
            s.settimeout(2)
            s.connect(("127.0.0.1", {server.getsockname()[1]}))
            found["network"] = "connected"
        except OSError as exc:
            found["network"] = str(exc)
        try:
            u = _socket.socket(_socket.AF_UNIX)
            u.settimeout(2)
            u.connect({str(tmp_path / "agent.sock")!r})
            found["unix"] = "connected"
        except OSError as exc:
            found["unix"] = str(exc)
        found["secret"] = os.environ.get("GRL_TEST_SECRET_TOKEN")
        try:
            resource.setrlimit(resource.RLIMIT_AS, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))
            found["limit"] = "raised"
        except (ValueError, OSError) as exc:
            found["limit"] = str(exc)
        child = subprocess.Popen(["sleep", "4242.5"], start_new_session=True)
        found["child"] = child.pid
        open({str(report)!r}, "w").write(json.dumps(found))
        ''')
    agent = socket.socket(socket.AF_UNIX)  # a local agent's socket, reachable by its path
    agent.bind(str(tmp_path / "agent.sock"))
    agent.listen(1)
    _, found = _run_against(tmp_path, {"probe": port("", scale=RIGHT) and probe})
    agent.close()
    assert found["probe"][0]["status"] == "differs"
    seen = json.loads(report.read_text())
    assert seen["network"] != "connected" and not accepted
    assert seen["unix"] != "connected", seen
    assert seen["secret"] is None
    assert seen["limit"] != "raised"
    assert not _processes("4242.5"), "a process the code under test started outlived the run"
    server.close()


def _processes(needle: str) -> list:
    found = []
    for entry in pathlib.Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if needle in (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace"):
                    found.append(int(entry.name))
            except OSError:
                continue
    return found


def test_nothing_outlives_a_tool_killed_while_the_code_under_test_spins(tmp_path):
    """kill -9 of the tool while a callable spins: the worker sees its stdin close and kills the
    child at once (not at the end of the time limit)."""
    marker = tmp_path / "spinning"
    (tmp_path / "orig").mkdir()
    (tmp_path / "port").mkdir()
    (tmp_path / "orig" / "flip.py").write_text(ORIGINAL)
    (tmp_path / "port" / "flip.py").write_text(port(f'''
        open({str(marker)!r}, "w").write(str(os.getpid()))
        while True:
            pass
        '''))
    tool = subprocess.Popen([sys.executable, "-m", "tf_grl_migrate", "--verify-against", str(tmp_path / "orig"),
                             str(tmp_path / "port"), "--verify-timeout", "600"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 240
    while not marker.exists() and time.time() < deadline:
        time.sleep(0.2)
    assert marker.exists(), "the spinning callable never ran"
    time.sleep(0.5)
    workers = _processes("tf_grl_migrate.verifier.zygote")  # the worker and its children (forks of it)
    assert len(workers) >= 2, workers
    tool.send_signal(signal.SIGKILL)
    tool.wait()
    deadline = time.time() + 30
    while time.time() < deadline and any(_alive(pid) for pid in workers):
        time.sleep(0.2)
    assert not [pid for pid in workers if _alive(pid)], "the worker or the spinning child outlived the tool"


def _alive(pid: int) -> bool:
    try:
        status = pathlib.Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False
    return "State:\tZ" not in status


def test_a_fifo_named_like_a_module_does_not_hang_the_run(tmp_path):
    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / "flip.py").write_text(ORIGINAL)
    os.mkfifo(tree / "pipe.py")
    result = cli(tree, "--no-cache")
    assert result.exit_code == 0, result.output
    result = cli(tree / "pipe.py", "--no-cache")
    assert "GRL901 cannot read: not a regular file" in result.output


def test_jobs_are_capped_at_the_cores_saying_so(tmp_path):
    (tmp_path / "flip.py").write_text(ORIGINAL)
    result = cli(tmp_path, "-j", "1000", "--no-cache")
    assert f"-j 1000: capped at {os.cpu_count()}, this machine's cores" in result.output


@pytest.mark.parametrize("name", ["flip_gradient", "FlipGradientBuilder"])
def test_a_right_hand_port_that_replaced_the_builder_class_is_verified_through_its_public_name(tmp_path, name):
    """The most common hand port replaced `class FlipGradientBuilder` + `flip_gradient =
    FlipGradientBuilder()` by `def flip_gradient(x, l=1.0)`: each site is reached through every
    name of the original the port defines too (the instance), never `differs` for a missing
    class; a wrong port of the same shape differs for its gradient; --verify-call pairs names."""
    builder = (pathlib.Path(__file__).parent / "cases" / "rewrite" / "dann_builder_class" / "before.py").read_text()
    right = textwrap.dedent('''\
        import tensorflow as tf


        def flip_gradient(x, l=1.0):
            @tf.custom_gradient
            def reverse(x):
                return tf.identity(x), lambda dy: -l * dy
            return reverse(x)
        ''')
    ports = {"right": right, "wrong": right.replace("-l * dy", "l * dy")}
    if name == "FlipGradientBuilder":  # the port's function under another name, paired by hand
        ports = {k: v.replace("def flip_gradient", "def reverse_gradient") for k, v in ports.items()}
    (tmp_path / "orig").mkdir()
    (tmp_path / "port").mkdir()
    for key, text in ports.items():
        (tmp_path / "orig" / f"{key}.py").write_text(builder)
        (tmp_path / "port" / f"{key}.py").write_text(text)
    options = ["--verify-call", "flip_gradient=reverse_gradient"] if name == "FlipGradientBuilder" else []
    result = cli("--verify-against", tmp_path / "orig", tmp_path / "port", "--format", "json", *options)
    found = {pathlib.Path(f["path"]).stem: f["verification"] for f in json.loads(result.stdout)["files"]}
    [right_v], [wrong_v] = found["right"], found["wrong"]
    assert right_v["status"] == "verified", right_v
    assert wrong_v["status"] == "differs" and "gradient of x differs" in wrong_v["reason"], wrong_v
    if name == "flip_gradient":  # unpaired, a port defining no name that reaches the site is named so
        (tmp_path / "port" / "right.py").write_text(right.replace("def flip_gradient", "def reverse_gradient"))
        result = cli("--verify-against", tmp_path / "orig" / "right.py", tmp_path / "port" / "right.py",
                     "--format", "json")
        [v] = json.loads(result.stdout)["files"][0]["verification"]
        assert v["status"] == "not_verifiable"
        assert "FlipGradientBuilder" in v["reason"] and "reverse_gradient" in v["reason"]
        assert "--verify-call" in v["reason"]


def test_no_module_a_child_writes_is_imported_by_a_later_child(tmp_path):
    """A port that plants a module named after each module the worker or its children import
    after forking (stdlib and the verifier's own), in its working folder and in the worker's start
    folder above it: no later child imports any of them, and the next file's wrong port differs."""
    from tf_grl_migrate.verifier import zygote

    marker = tmp_path / "imported"
    names = [n.split(".")[0] for n in zygote.LATE_IMPORTS] + list(zygote.OWN_MODULES) + ["json", "select",
                                                                                          "numpy", "keras"]
    planter = port(f'''
        for folder in {{os.getcwd(), os.path.dirname(os.getcwd()), os.environ.get("TMPDIR", os.getcwd())}}:
            for name in {names!r}:
                try:
                    with open(os.path.join(folder, name + ".py"), "w") as handle:
                        handle.write("open(%r, 'a').write(%r)\\n" % ({str(marker)!r}, name))
                except OSError:
                    pass
        ''', scale=RIGHT)
    _result, found = _run_against(tmp_path, {"a_planter": planter, "b_lost_its_sign": port(""),
                                            "c_right": port("", scale=RIGHT)}, "-j", "1")
    assert found["a_planter"][0]["status"] == "verified", found["a_planter"]
    assert found["b_lost_its_sign"][0]["status"] == "differs", found["b_lost_its_sign"]
    assert found["c_right"][0]["status"] == "verified", found["c_right"]
    assert not marker.exists(), marker.read_text()


def test_a_project_module_named_like_a_stdlib_module_the_verifier_uses_is_not_the_verifiers(tmp_path):
    """`symtable.py` in the user's tree (the verifier's loader imports symtable): a right port
    is still verified."""
    shadow = "raise ImportError('the project symtable, not the standard library one')\n"
    (tmp_path / "orig").mkdir()
    (tmp_path / "port").mkdir()
    for tree in ("orig", "port"):
        (tmp_path / tree / "symtable.py").write_text(shadow)
        (tmp_path / tree / "tempfile.py").write_text(shadow)
    (tmp_path / "orig" / "flip.py").write_text(ORIGINAL)
    (tmp_path / "port" / "flip.py").write_text(port("", scale=RIGHT))
    result = cli("--verify-against", tmp_path / "orig" / "flip.py", tmp_path / "port" / "flip.py", "--format", "json")
    [entry] = json.loads(result.stdout)["files"]
    assert entry["verification"][0]["status"] == "verified", entry["verification"]


def test_the_code_under_test_is_compiled_with_its_own_future_features_only(tmp_path):
    """The loader's `from __future__ import annotations` is not handed on: a port's annotations
    are objects, as Python gives them; a port with the future import of its own keeps strings."""
    checks = '''
        if flip_gradient.__annotations__["x"] is not tf.Tensor:
            raise TypeError("annotations became strings: %r" % flip_gradient.__annotations__)
        '''
    right = port(checks, scale=RIGHT).replace("def flip_gradient(x):", "def flip_gradient(x: tf.Tensor):")
    own_future = "from __future__ import annotations\n" + right.replace(
        'is not tf.Tensor:', '!= "tf.Tensor":')
    _result, found = _run_against(tmp_path, {"objects": right, "own_future": own_future}, "-j", "1")
    assert found["objects"][0]["status"] == "verified", found["objects"]
    assert found["own_future"][0]["status"] == "verified", found["own_future"]


def test_a_name_bound_by_a_statement_verification_does_not_run_is_not_verifiable_naming_it(tmp_path):
    """`flip_gradient = _Flipper()` whose `__init__` makes a lock: verification does not run that
    statement, so the port's `flip_gradient` is not there: not verifiable, naming the line (it
    said `differs: the migrated module defines no flip_gradient`)."""
    flipper = port("", scale=RIGHT).replace("def flip_gradient(x):", "def _flip_gradient(x):") + textwrap.dedent('''

        class _Flipper:
            def __init__(self):
                import threading
                self.lock = threading.Lock()

            def __call__(self, x):
                return _flip_gradient(x)


        flip_gradient = _Flipper()
        ''')
    _result, found = _run_against(tmp_path, {"flipper": flipper})
    [v] = found["flipper"]
    assert v["status"] == "not_verifiable", v
    assert "flip_gradient = _Flipper()" in v["reason"] and "line" in v["reason"], v


def test_every_shared_public_name_that_reaches_a_site_is_tried(tmp_path):
    """A port right through three public names and wrong only through its fourth differs."""
    original = ORIGINAL + "".join(f"\n\ndef path_{i}(x):\n    return flip_gradient(x) * {i + 1}.0\n" for i in range(4))
    wrong = port("", scale=RIGHT) + "".join(f"\n\ndef path_{i}(x):\n    return flip_gradient(x) * {i + 1}.0\n"
                                            for i in range(3))
    wrong += "\n\ndef path_3(x):\n    return tf.identity(x) * 4.0\n"
    (tmp_path / "orig").mkdir()
    (tmp_path / "port").mkdir()
    (tmp_path / "orig" / "m.py").write_text(original)
    (tmp_path / "port" / "m.py").write_text(wrong)
    result = cli("--verify-against", tmp_path / "orig" / "m.py", tmp_path / "port" / "m.py", "--format", "json")
    [entry] = json.loads(result.stdout)["files"]
    assert [v["status"] for v in entry["verification"]] == ["differs"], entry["verification"]


def _holding(path: pathlib.Path) -> list:
    """The processes that hold ``path`` open."""
    found = []
    for entry in pathlib.Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if any(os.readlink(fd) == str(path) for fd in (entry / "fd").iterdir()):
                found.append(int(entry.name))
        except OSError:
            continue
    return found


def test_nothing_the_code_under_test_starts_outlives_the_run_however_it_hides(tmp_path):
    """The callable clears its parent-death signal and leaves the process group (`setsid`: with
    namespaces it is the PID namespace's init), and double-forks a daemon that does the same; both
    hold a file open and wait. After the time limit, neither is left (the worker is a subreaper
    and sweeps everything below it)."""
    held = tmp_path / "held-open"
    hiding = port(f'''
        import ctypes, time
        handle = open({str(held)!r}, "w")

        def hide():
            ctypes.CDLL(None).prctl(1, 0, 0, 0, 0)  # PR_SET_PDEATHSIG: none
            try:
                os.setsid()
            except OSError:
                pass  # already a session leader (no namespaces: the request's own process)

        hide()
        if os.fork() == 0:
            if os.fork() == 0:
                hide()
                while True:
                    time.sleep(0.05)
            os._exit(0)
        while True:
            time.sleep(0.05)
        ''')
    _result, found = _run_against(tmp_path, {"hiding": hiding}, "--verify-timeout", "20")
    assert found["hiding"][0]["status"] == "not_verifiable", found
    deadline = time.time() + 10
    while time.time() < deadline and _holding(held):
        time.sleep(0.2)
    assert not _holding(held), "a process the code under test started outlived the run"


def test_code_python_runs_without_a_call_in_the_text_never_runs_at_load(tmp_path):
    """A project module the code under test imports (its bindings load): a metaclass, a reflected
    operator, a with item's __enter__ would each touch a file as it loads; none runs, and the site,
    which needs none of them, verifies."""
    touched = tmp_path / "touched"
    (tmp_path / "helpers.py").write_text(textwrap.dedent(f'''\
        class _Touch(type):
            def __new__(mcs, *args):
                open({str(touched)!r}, "a").write("metaclass ")
                return super().__new__(mcs, *args)

            def __radd__(cls, other):
                open({str(touched)!r}, "a").write("operator ")
                return other

            def __enter__(cls):
                open({str(touched)!r}, "a").write("enter ")

            def __exit__(cls, *exc):
                return False


        class Plain:
            pass


        class Touching(Plain, metaclass=_Touch):
            pass


        OFFSET = 1.0 + Touching
        with Touching:
            ENTERED = True
        '''))
    (tmp_path / "model.py").write_text("import helpers\n" + ORIGINAL)
    result = cli(tmp_path, "--verify", "--format", "json", "--no-cache")
    assert result.exit_code == 0, result.output
    (site,) = [v for f in json.loads(result.stdout)["files"] for v in f.get("verification", [])]
    assert site["status"] == "verified", site
    assert not touched.exists(), touched.read_text()
