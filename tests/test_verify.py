"""Verification (--verify, --verify-against): the original under TF1 semantics, the migrated code
under TF2, in worker processes with real TensorFlow. Each test runs one batch of files (one pair of
workers, TensorFlow imported once per worker)."""

from __future__ import annotations

import json
import pathlib
import shutil
import subprocess
import sys
import textwrap

import pytest
from harness import CASES, cli

from tf_grl_migrate import migrate_paths
from tf_grl_migrate.api import _verify, verify_port
from tf_grl_migrate.codes import CODES
from tf_grl_migrate.report import FileReport

VERIFY = CASES / "verify"
ROOT = pathlib.Path(__file__).resolve().parent.parent
# Wrong hand ports: the right port (tests/cases/verify/right/grads.py) with one edit each,
# (the callable it breaks, the text replaced, its replacement); the other callables stay right.
WRONG_EDITS = {
    "lost_sign": ("flip_gradient", "lambda dy: -l * dy", "lambda dy: l * dy"),
    "ignores_scale": ("flip_gradient", "lambda dy: -l * dy", "lambda dy: -dy"),
    "changed_forward": ("flip_gradient", "return tf.identity(x), lambda dy", "return tf.identity(x) * 1.5, lambda dy"),
    "ste_lost_clipping": ("binarize", "    clipped = x * tf.cast(tf.abs(x) <= 1.0, x.dtype)\n", "    clipped = x\n"),
    "guided_relu_without_gate": ("guided_relu", "dy * tf.cast(dy > 0.0, dy.dtype) * tf.cast(y > 0.0, dy.dtype)",
                                 "dy * tf.cast(y > 0.0, dy.dtype)"),
    "two_inputs_swapped": ("uneven_max", "(dy * 0.75, dy * 0.25)", "(dy * 0.25, dy * 0.75)"),
}
WRONG = sorted(WRONG_EDITS)
BROKEN = {name: edit[0] for name, edit in WRONG_EDITS.items()}


def by_callable(verifications):
    return {v.callable.split("(")[0]: v for v in verifications}


@pytest.fixture(scope="module")
def hand_ports(tmp_path_factory):
    """--verify-against over two trees: the TF1 original beside each port (one right, written unlike
    the tool's output: a Keras layer with its own custom_gradient, a stop_gradient trick; and one
    wrong port per shape the tool knows)."""
    root = tmp_path_factory.mktemp("ports")
    (root / "tf1").mkdir()
    (root / "tf2").mkdir()
    right = (VERIFY / "right" / "grads.py").read_text()
    for name in ["right", *WRONG]:
        shutil.copy(VERIFY / "original" / "grads.py", root / "tf1" / f"{name}.py")
        port = right
        if name != "right":
            _, old, new = WRONG_EDITS[name]
            assert right.count(old) == 1, name
            port = right.replace(old, new)
        (root / "tf2" / f"{name}.py").write_text(port)
    reports = verify_port(str(root / "tf1"), str(root / "tf2"), jobs=2)
    return root, {pathlib.Path(r.path).stem: r for r in reports}


def test_a_right_hand_port_written_differently_is_verified(hand_ports):
    _, reports = hand_ports
    found = by_callable(reports["right"].verification)
    assert set(found) == {"flip_gradient", "binarize", "guided_relu", "uneven_max"}
    assert {v.status for v in found.values()} == {"verified"}, found
    # a reversal that ignored its scale must not pass because the scale defaults to 1.0
    assert "l=1.0|0.5" in found["flip_gradient"].callable


@pytest.mark.parametrize("name", WRONG)
def test_every_wrong_hand_port_differs(hand_ports, name):
    _, reports = hand_ports
    found = by_callable(reports[name].verification)
    assert found[BROKEN[name]].status == "differs", found[BROKEN[name]]
    assert found[BROKEN[name]].reason
    others = [v for c, v in found.items() if c != BROKEN[name]]
    assert {v.status for v in others} == {"verified"}, others
    diagnostic = next(d for d in reports[name].diagnostics if d.code == "GRL302")
    assert diagnostic.severity == "error" and "does not compute what the original did" in diagnostic.text


def test_verify_against_on_the_command_line_exits_1_and_writes_nothing(tmp_path):
    original, port = tmp_path / "old.py", tmp_path / "new.py"
    shutil.copy(VERIFY / "original" / "grads.py", original)
    _, old, new = WRONG_EDITS["lost_sign"]
    port.write_text((VERIFY / "right" / "grads.py").read_text().replace(old, new))
    before = port.read_bytes()
    result = cli("--verify-against", original, port, "--format", "json")
    assert result.exit_code == 1, result.output
    data = json.loads(result.stdout)
    assert data["totals"]["differs"] == 1 and data["totals"]["verified"] == 3
    _validate(data)
    assert port.read_bytes() == before
    assert cli("--verify-against", original, port, "--write").exit_code == 2  # nothing is ever written


REWRITE_CASES = sorted(p.name for p in (CASES / "rewrite").iterdir() if (p / "before.py").exists())
# cases whose callable cannot be exercised as it stands (and says why): a matrix product of two
# inputs of one shape, a name scope passed as a tensor, a loop over a list, a random draw
NOT_VERIFIABLE = {("matmul_fixed_feedback_two_gradients", 17), ("registration_used_with_varying_names", 11),
                  ("straight_through_in_a_loop_with_list_append", 10), ("tf1_only_names_in_gradient", 11)}


@pytest.fixture(scope="module")
def verified_tree(tmp_path_factory):
    """--verify over every rewrite case (each its own file), both strategies, in one run each: the
    differential tests' proof again, by the package's own verifier."""
    runs = {}
    for strategy in ("inline", "runtime"):
        root = tmp_path_factory.mktemp(f"verify-{strategy}")
        for case in REWRITE_CASES:
            shutil.copy(CASES / "rewrite" / case / "before.py", root / f"{case}.py")
        extra = ["--use-runtime"] if strategy == "runtime" else []
        result = cli(root, "--verify", "--format", "json", "--no-cache", *extra)
        runs[strategy] = (root, result)
    return runs


@pytest.mark.parametrize("strategy", ["inline", "runtime"])
def test_verify_proves_every_migrated_site_of_the_cases(verified_tree, strategy):
    root, result = verified_tree[strategy]
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    _validate(data)
    for entry in data["files"]:
        assert entry["changed"], entry["path"]
        assert entry["verification"], entry["path"]
        case = pathlib.Path(entry["path"]).stem
        for v in entry["verification"]:
            expected = "not_verifiable" if (case, v["line"]) in NOT_VERIFIABLE else "verified"
            assert v["status"] == expected, (case, v)
            assert (v["max_abs_diff"] is None) == (expected == "not_verifiable")
    t = data["totals"]
    assert t["verified"] >= len(REWRITE_CASES) - len(NOT_VERIFIABLE) and t["differs"] == 0
    assert all(f["path"].endswith(".py") for f in data["files"])
    # a dry run: nothing written
    assert (root / "dann_builder_class.py").read_text() == (CASES / "rewrite" / "dann_builder_class" /
                                                          "before.py").read_text()


def test_verify_text_report_names_callable_shapes_values_and_difference(tmp_path):
    shutil.copy(CASES / "rewrite" / "dann_builder_class" / "before.py", tmp_path / "flip_gradient.py")
    result = cli(tmp_path / "flip_gradient.py", "--verify", "--no-cache")
    assert result.exit_code == 0, result.output
    line = next(l for l in result.stderr.splitlines() if "GRL301" in l)
    assert "flip_gradient.py:" in line and "FlipGradientBuilder()(x[4,3], l=1.0|" in line and "max |diff| 0" in line
    assert result.stderr.strip().splitlines()[-1].endswith("1 site verified, 0 differ, 0 not verifiable")


QUANTIZER = """\
import tensorflow as tf
from tensorflow.python.framework.function import Defun


def scaled_sign_quantizer(init=0.5):
    @Defun(tf.float32, tf.float32, tf.float32)
    def backward(weights, scale, grad):
        return grad * scale, tf.reduce_sum(grad * tf.sign(weights))

    @Defun(tf.float32, tf.float32, grad_func=backward)
    def forward(weights, scale):
        return tf.sign(weights) * scale

    def wrapper(weights):
        scale = tf.compat.v1.get_variable("scale", initializer=init)
        return forward(weights, scale)

    return wrapper
"""


def test_a_variable_get_variable_makes_per_call_is_made_afresh_in_every_run(tmp_path):
    """TTQ's shape (blue-oil): the wrapper makes its variable with get_variable each call. TF1 ran
    each setting in a graph of its own; TF2 keeps one get_variable store for every tf.function:
    without a fresh store per run, the second setting's run reused the first's variable, made
    none, and the site was 'not verifiable'."""
    (tmp_path / "quantizer.py").write_text(QUANTIZER)
    result = cli(tmp_path, "--verify", "--format", "json", "--no-cache")
    (verification,) = json.loads(result.output)["files"][0]["verification"]
    assert verification["status"] == "verified", verification
    assert verification["callable"] == "scaled_sign_quantizer(init=0.5|2.0)(x[4,3])"


def test_a_wrong_migration_is_not_written_and_exits_1(tmp_path):
    """The tool's own output is right on the cases; a wrong rewrite is simulated by handing the
    verifier a migrated text whose reversal lost its sign."""
    path = tmp_path / "flip_gradient.py"
    shutil.copy(CASES / "rewrite" / "dann_builder_class" / "before.py", path)
    original = path.read_bytes()
    good = (CASES / "rewrite" / "dann_builder_class" / "after.py").read_text()
    bad = good.replace("tf.negative(grad) * l", "grad * l")
    assert bad != good
    report = FileReport(str(path), changed=True)
    report.new_text, report.source = bad, original
    _verify([report], [str(tmp_path)], write=True, use_runtime=False, jobs=1, timeout=None, cache=None)
    assert report.differs and not report.written
    assert path.read_bytes() == original
    d = next(d for d in report.diagnostics if d.code == "GRL302")
    assert "please report it" in d.message and d.line == 17
    from tf_grl_migrate import report as report_module

    assert report_module.exit_status([report], check=False) == 1
    report = FileReport(str(path), changed=True)
    report.new_text, report.source = good, original
    _verify([report], [str(tmp_path)], write=True, use_runtime=False, jobs=1, timeout=None, cache=None)
    assert report.written and path.read_text() == good


SCALER = textwrap.dedent("""\
    import tensorflow as tf
    from tensorflow.python.framework import function


    def scale_grad(x, scale, name=None):
        if scale == 1.0:  # a TF1 graph compares a tensor here as an object; TF2 eagerly, element by element
            return tf.identity(x, name=name)
        factor = tf.convert_to_tensor(scale)

        @function.Defun(tf.float32, tf.float32, python_grad_func=lambda op, g: (g * op.inputs[1], None))
        def scaler(x, unused):
            return x

        return scaler(x, factor, name=name)
    """)


def test_a_way_tf2_cannot_call_is_passed_over_and_a_broken_unchanged_line_is_the_migrations(tmp_path):
    """`scale` flows into the Defun, so the first way of calling gives it a tensor: TF1's graph ran
    `scale == 1.0` as an object comparison, TF2 cannot (code the migration did not change), so the
    next way (a number) is tried and verifies, saying why. A migration that broke an unchanged line
    (the Defun's `name=` kept, which the custom-gradient function cannot take) differs: the
    migrated code raises under TF1 semantics too, where the original ran."""
    path = tmp_path / "scaler.py"
    path.write_text(SCALER)
    result = cli(tmp_path, "--verify", "--format", "json", "--no-cache")
    (verification,) = json.loads(result.output)["files"][0]["verification"]
    assert verification["status"] == "verified", verification
    assert verification["callable"] == "scale_grad(x[4,3], scale=1.0|0.5)"
    assert "TF2 could not run scale_grad(x[4,3], scale[4,3])" in verification["reason"]
    from tf_grl_migrate.migrator.codemod import migrate_code

    migrated = migrate_code(SCALER).code
    assert "scaler(x, factor)" in migrated
    report = FileReport(str(path), changed=True)
    report.new_text, report.source = migrated.replace("scaler(x, factor)", "scaler(x, factor, name=name)"), \
        path.read_bytes()
    _verify([report], [str(tmp_path)], write=True, use_runtime=False, jobs=1, timeout=None, cache=None)
    assert report.differs and not report.written
    d = next(d for d in report.diagnostics if d.code == "GRL302")
    assert "raises under TF1 semantics too" in d.details and "the migration broke it" in d.details


def test_verification_checks_and_writes_the_bytes_the_migration_read(tmp_path):
    """--verify --write proves the pair the migration made (the bytes it read, their migration),
    and writes only over those bytes: a file edited after it was migrated keeps the edit."""
    path = tmp_path / "flip_gradient.py"
    shutil.copy(CASES / "rewrite" / "dann_builder_class" / "before.py", path)
    migrated = (CASES / "rewrite" / "dann_builder_class" / "after.py").read_text()
    report = FileReport(str(path), changed=True)
    report.new_text, report.source = migrated, path.read_bytes()
    edited = path.read_text() + "\nLATER = 1  # the user's edit, made while the run went on\n"
    path.write_text(edited)
    _verify([report], [str(tmp_path)], write=True, use_runtime=False, jobs=1, timeout=None, cache=None)
    assert {v.status for v in report.verification} == {"verified"}
    assert not report.written and path.read_text() == edited
    [d] = [d for d in report.diagnostics if d.code == "GRL905"]
    assert "changed on disk" in d.message


def test_not_verifiable_says_why(tmp_path):
    (tmp_path / "shapes.py").write_text(textwrap.dedent('''\
        import tensorflow as tf
        import a_module_nobody_installed as missing

        OPEN = open("should-never-be-created.txt", "w")  # script code: never run


        def noisy_binarize(x):
            g = tf.get_default_graph()
            with g.gradient_override_map({"Sign": "Identity"}):
                return tf.sign(x + tf.random.uniform(tf.shape(x)))


        def uses_missing(x):
            s = missing.scale(2.0)
            overrides = {"Sign": "Identity"}
            g = tf.get_default_graph()
            with g.gradient_override_map(overrides):
                return tf.sign(x) * s


        def sleeps(x):
            import time
            time.sleep(600)
            g = tf.get_default_graph()
            with g.gradient_override_map({"Sign": "Identity"}):
                return tf.sign(x)


        raise SystemExit("script code: never run")
        '''))
    result = cli(tmp_path / "shapes.py", "--verify", "--verify-timeout", "8", "--format", "json", "--no-cache")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    found = {v["line"]: v for v in data["files"][0]["verification"]}
    assert set(found) == {9, 17, 25}, found
    assert found[9]["status"] == "not_verifiable" and "random numbers" in found[9]["reason"]
    # the map is a variable: the block cannot be exercised alone either
    assert found[17]["status"] == "not_verifiable" and "a_module_nobody_installed" in found[17]["reason"]
    # a callable that runs past its time: its block alone is proven, and the note says why
    assert found[25]["status"] == "verified" and "timed out after 8 s" in found[25]["reason"]
    assert found[25]["callable"].startswith("the block at line 25")
    assert not (tmp_path / "should-never-be-created.txt").exists()
    assert data["totals"]["not_verifiable"] == 2


def test_module_level_override_is_verified_as_its_block_alone(tmp_path):
    (tmp_path / "script.py").write_text(textwrap.dedent('''\
        import tensorflow as tf

        @tf.RegisterGradient("ScriptClip")
        def _clip(unused_op, grad):
            return tf.clip_by_value(grad, -0.1, 0.1)

        value = tf.Variable([3.0, -2.0], dtype=tf.float32)
        g = tf.get_default_graph()
        with g.gradient_override_map({"Identity": "ScriptClip"}):
            out = tf.identity(value, name="Identity")
        print(tf.gradients(out, value))
        '''))
    result = cli(tmp_path / "script.py", "--verify", "--format", "json", "--no-cache")
    assert result.exit_code == 0, result.output
    [v] = json.loads(result.stdout)["files"][0]["verification"]
    assert v["status"] == "verified" and v["callable"].startswith("the block at line 9")
    assert "override block alone" in v["reason"]


def test_the_main_process_never_imports_tensorflow(tmp_path):
    shutil.copy(CASES / "rewrite" / "sign_straight_through" / "before.py", tmp_path / "ste.py")
    code = textwrap.dedent(f'''\
        import sys
        from tf_grl_migrate import migrate_paths
        [r] = migrate_paths([{str(tmp_path / "ste.py")!r}], verify=True, cache=False)
        assert [v.status for v in r.verification] == ["verified"], r.verification
        print("tensorflow" in sys.modules, "keras" in sys.modules)
        ''')
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=600)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split() == ["False", "False"]


def test_verify_results_are_cached_by_tensorflow_version(tmp_path, monkeypatch):
    monkeypatch.setenv("TF_GRL_MIGRATE_CACHE_DIR", str(tmp_path / "cache"))
    shutil.copy(CASES / "rewrite" / "sign_straight_through" / "before.py", tmp_path / "ste.py")
    [first] = migrate_paths([tmp_path / "ste.py"], verify=True)
    from tf_grl_migrate.verifier import driver as verification

    calls = []
    monkeypatch.setattr(verification, "verify", lambda *a, **k: calls.append(1) or {})
    [second] = migrate_paths([tmp_path / "ste.py"], verify=True)
    assert not calls and second.verification == first.verification
    monkeypatch.setattr(verification, "tensorflow_version", lambda python=None: "tensorflow 9.9")
    [third] = migrate_paths([tmp_path / "ste.py"], verify=True)
    assert calls and third.verification == []  # asked again (the stand-in answers nothing)


def test_an_outcome_the_machine_cut_short_is_asked_for_again(tmp_path, monkeypatch):
    """Only answers about the code are stored: a site left without one for a reason of the
    machine's (``transient``: a timeout, a worker that died) is verified again next run, while the
    code's own answer is stored whatever its words say ("timed out" raised by the callable)."""
    monkeypatch.setenv("TF_GRL_MIGRATE_CACHE_DIR", str(tmp_path / "cache"))
    shutil.copy(CASES / "rewrite" / "sign_straight_through" / "before.py", tmp_path / "ste.py")
    from tf_grl_migrate.verifier import driver as verification

    for transient, asked in [(True, 2), (False, 1)]:
        calls = []
        said = verification.Verification(7, 5, "f", verification.NOT_VERIFIABLE, None, "timed out after 8 s", transient)
        monkeypatch.setattr(verification, "verify", lambda jobs, said=said, calls=calls, **kwargs: calls.append(1) or {
            job.path: [said] for job in jobs})
        for _ in range(2):
            [report] = migrate_paths([tmp_path / "ste.py"], verify=True)
            assert [v.reason for v in report.verification] == ["timed out after 8 s"]
        assert len(calls) == asked, transient


def test_usage_errors():
    assert cli("-", "--verify", input="x = 1\n").exit_code == 2
    assert cli(VERIFY / "original", "--verify-against", VERIFY / "original" / "grads.py").exit_code == 2


def test_the_codes_are_in_the_table():
    assert {"GRL301", "GRL302", "GRL303"} <= set(CODES)


def _validate(data):
    import jsonschema

    schema = json.loads((ROOT / "tf_grl_migrate" / "report.schema.json").read_text())
    jsonschema.validate(data, schema)


def test_tf2s_other_meaning_for_untouched_code_is_not_blamed_on_the_migration(tmp_path):
    """TF2's softmax_cross_entropy_with_logits backpropagates into its labels, TF1's did not: the
    migrated site gives TF2 values unlike TF1's, yet the migrated code under TF1 semantics gives the
    original's, so the callable is no proof either way (never a 'differs' for the tool's rewrite);
    the override block alone is then proven."""
    (tmp_path / "drift.py").write_text(textwrap.dedent('''\
        import tensorflow as tf


        def loss_of(x):
            g = tf.get_default_graph()
            with g.gradient_override_map({"Sign": "Identity"}):
                s = tf.sign(x)
            return tf.nn.softmax_cross_entropy_with_logits(labels=tf.nn.softmax(x), logits=s)
        '''))
    result = cli(tmp_path / "drift.py", "--verify", "--format", "json", "--no-cache")
    assert result.exit_code == 0, result.output
    [v] = json.loads(result.stdout)["files"][0]["verification"]
    assert v["status"] == "verified" and v["callable"].startswith("the block at line 6"), v
    assert "code the migration did not change" in v["reason"]


def test_a_site_whose_code_names_its_input_shape_is_called_with_that_shape(tmp_path):
    """Geometry code fails on every shape the verifier tries first: a pose split into two
    3-vectors needs a last axis of 6, which the module's own `tf.split(..., [3, 3], axis=-1)` says."""
    (tmp_path / "pose.py").write_text(textwrap.dedent('''\
        import tensorflow as tf
        from tensorflow.python.framework import function


        def _pose_grad(op, grad):
            return tf.concat([grad, -0.5 * grad], axis=-1)


        @function.Defun(tf.float32, python_grad_func=_pose_grad)
        def rotated_translation(pose):
            t, w = tf.split(pose, [3, 3], axis=-1)
            return t * tf.cos(w)
        '''))
    result = cli(tmp_path / "pose.py", "--verify", "--format", "json", "--no-cache")
    assert result.exit_code == 0, result.output
    [v] = json.loads(result.stdout)["files"][0]["verification"]
    assert v["status"] == "verified" and "pose[4,6]" in v["callable"], v


@pytest.mark.parametrize("case", ["names_grads_layers_three_modules", "registration_constant_two_modules", "dann"])
def test_verify_a_repository_whose_modules_import_each_other(tmp_path, case):
    """Project modules load as their definitions and constants (never their script code), those
    the run migrated as migrated, an `import grads` that registers gradients kept; written only
    once every site is proven."""
    shutil.copytree(CASES / "repo" / case, tmp_path / case)
    result = cli(tmp_path / case, "--verify", "--write", "--format", "json", "--no-cache")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    sites = [v for f in data["files"] for v in f.get("verification", [])]
    assert sites and {v["status"] for v in sites} == {"verified"}, sites
    assert all(f["written"] for f in data["files"] if f["changed"])


def test_a_worker_that_cannot_start_says_so_once_per_site_and_is_not_retried(tmp_path):
    """No TensorFlow (here: no interpreter at all) is no crash: every site is not verifiable, and
    says why."""
    from tf_grl_migrate.verifier import Job, verify

    text = (CASES / "rewrite" / "sign_straight_through" / "before.py").read_text()
    new = (CASES / "rewrite" / "sign_straight_through" / "after.py").read_text()
    found = verify([Job(str(tmp_path / "ste.py"), text, new)], python=str(tmp_path / "no-python"))
    [v] = found[str(tmp_path / "ste.py")]
    assert v.status == "not_verifiable" and "could not be started" in v.reason


def test_verify_against_a_missing_migrated_file_is_reported(tmp_path):
    original = tmp_path / "old.py"
    shutil.copy(VERIFY / "original" / "grads.py", original)
    [report] = verify_port(str(original), str(tmp_path / "gone.py"))
    [d] = report.diagnostics
    assert d.code == "GRL901" and "the migrated file" in d.message and "cannot read" in d.message


def test_verify_reports_every_site_moved_onto_the_runtime_map(tmp_path):
    """--use-runtime --verify: each block moved onto tf_grl_migrate.gradient_override_map (also a map
    entered by hand) gets a verification entry, verified or not verifiable with the reason; none
    is silently left out, none differs."""
    cases = sorted(p for p in (CASES / "refuse").iterdir() if (p / "after_runtime.py").exists())
    for case in cases:
        shutil.copy(case / "before.py", tmp_path / f"{case.name}.py")
    result = cli(tmp_path, "--use-runtime", "--verify", "--format", "json", "--no-cache")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    _validate(data)
    statuses = {}
    for entry in data["files"]:
        name = pathlib.Path(entry["path"]).stem
        source = (CASES / "refuse" / name / "before.py").read_text()
        migrated = (CASES / "refuse" / name / "after_runtime.py").read_text()
        moved = source.count(".gradient_override_map(") - migrated.count(".gradient_override_map(") + migrated.count(
            "tf_grl_migrate.gradient_override_map(")
        assert len(entry["verification"]) == moved, (name, entry["verification"])
        for v in entry["verification"]:
            assert v["status"] in ("verified", "not_verifiable"), (name, v)
            assert v["status"] == "verified" or v["reason"], (name, v)
            statuses[(name, v["line"])] = v["status"]
    assert statuses[("gradient_reads_op_attr", 11)] == "verified"
    # `explained(x, model)`: the map entered in Explainer.__enter__, reached through the function that
    # uses the class; its `model` parameter, called, is given a small model making a Relu (the map's type)
    assert statuses[("map_entered_by_hand", 15)] == "verified"
    # a class keeping its graph in an attribute, its map entered in __enter__: exercised through the
    # module-level function that uses it (`with Explainer(): ...`)
    assert statuses[("graph_kept_in_an_attribute", 15)] == "verified"


def test_a_star_imported_module_that_is_not_installed_is_named(tmp_path):
    """`from tensorpack import *` of a module that is not installed binds nothing: the NameError
    the callable then meets is named as the missing module it comes from."""
    (tmp_path / "quant.py").write_text(textwrap.dedent('''\
        import tensorflow as tf
        from a_library_nobody_installed import *


        class Quantizer(ModelDesc):
            def quantize(self, x):
                g = tf.get_default_graph()
                with g.gradient_override_map({"Sign": "Identity"}):
                    return tf.sign(x)
        '''))
    result = cli(tmp_path / "quant.py", "--verify", "--format", "json", "--no-cache")
    [v] = json.loads(result.stdout)["files"][0]["verification"]
    assert v["status"] != "differs"
    assert "a_library_nobody_installed" in (v["reason"] or ""), v


def test_verify_from_a_parent_folder_finds_the_sibling_modules(tmp_path, monkeypatch):
    """`tf-grl-migrate . --verify` from the folder above a project: its modules import each other
    as they do from the project's own folder (paths sent to the workers are absolute)."""
    shutil.copytree(CASES / "repo" / "registration_constant_two_modules", tmp_path / "project")
    monkeypatch.chdir(tmp_path)
    result = cli(".", "--verify", "--format", "json", "--no-cache")
    assert result.exit_code == 0, result.output
    sites = [v for f in json.loads(result.stdout)["files"] for v in f.get("verification", [])]
    assert sites and {v["status"] for v in sites} == {"verified"}, sites


NAMESPACE_MODEL = '''\
import tensorflow as tf

from pkg.sub import SCALE


@tf.RegisterGradient("ScaledFlip")
def _scaled_flip(op, grad):
    return -SCALE * grad


def flip(x):
    g = tf.get_default_graph()
    with g.gradient_override_map({"Identity": "ScaledFlip"}):
        return tf.identity(x)
'''


def test_a_package_without_init_imports_as_python_would_and_one_above_the_run_is_named(tmp_path):
    """`pkg/` without `__init__.py` is a namespace package (PEP 420): its modules import under
    verification as they do in Python; run from inside `pkg/`, the module is in the tree but above
    where the run starts, and the reason says so and where to run the tool."""
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "sub.py").write_text("SCALE = 0.5\n")
    (tmp_path / "pkg" / "model.py").write_text(NAMESPACE_MODEL)
    result = cli(tmp_path, "--verify", "--format", "json", "--no-cache")
    sites = [v for f in json.loads(result.stdout)["files"] for v in f.get("verification", [])]
    assert [v["status"] for v in sites] == ["verified"], sites
    result = cli(tmp_path / "pkg", "--verify", "--format", "json", "--no-cache")
    (site,) = [v for f in json.loads(result.stdout)["files"] for v in f.get("verification", [])]
    assert site["status"] == "not_verifiable"
    assert (f"needs module pkg.sub: it is in the tree, in {tmp_path}, above where the run starts "
            f"({tmp_path / 'pkg'}); run the tool on {tmp_path}") in site["reason"], site


DEFUN_ORIGINAL = '''\
import tensorflow as tf
from tensorflow.python.framework import function


def _ste_grad(op, dy):
    return dy * tf.cast(tf.abs(op.inputs[0]) <= 1.0, dy.dtype)


@function.Defun(tf.float32, python_grad_func=_ste_grad)
def ste_sign(x):
    return tf.sign(x)
'''

DEFUN_PORT = '''\
import tensorflow as tf


@tf.custom_gradient
def ste_sign(x):
    def grad(dy):
        return {gradient}

    return tf.sign(x), grad
'''


def test_a_hand_port_of_a_defun_is_checked_against_it(tmp_path):
    """--verify-against takes a Defun original like a map's (it was passed over: no site checked)."""
    (tmp_path / "orig").mkdir()
    (tmp_path / "port").mkdir()
    (tmp_path / "orig" / "ste.py").write_text(DEFUN_ORIGINAL)
    outcome = {}
    for name, gradient in (("right", "dy * tf.cast(tf.abs(x) <= 1.0, dy.dtype)"), ("wrong", "dy")):
        (tmp_path / "port" / "ste.py").write_text(DEFUN_PORT.format(gradient=gradient))
        result = cli("--verify-against", tmp_path / "orig", tmp_path / "port", "--format", "json")
        (site,) = json.loads(result.stdout)["files"][0]["verification"]
        outcome[name] = site["status"]
    assert outcome == {"right": "verified", "wrong": "differs"}
