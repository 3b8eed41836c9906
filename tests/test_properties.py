"""Property-based: generated legacy gradient-reversal modules, in every combination of the shapes
the migrator supports, come out parseable, stable, override-free and numerically equal to TF1."""

import json
import random
import subprocess
import sys

import harness
import libcst as cst
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tf_grl_migrate.migrator.codemod import migrate_code

SCALES = ["l", "alpha", "hp_lambda", "learning_rate", "scale"]
NAMES = {
    "percent": 'grad_name = "Flip%d" % id(x)',
    "format": 'grad_name = "Flip{}".format(id(x))',
    "fstring": 'grad_name = f"Flip{id(x)}"',
    "concat": 'grad_name = "Flip" + str(id(x))',
}
REGISTER = ["tf.RegisterGradient", "ops.RegisterGradient", "tf.compat.v1.RegisterGradient"]
RECEIVERS = ["g = tf.get_default_graph()\n    with g", "with tf.get_default_graph()",
             "with tf.compat.v1.get_default_graph()", "with x.graph", "g = ops.get_default_graph()\n    with g"]
BODIES = ["[tf.negative(grad) * {s}]", "-grad * {s}", "[grad * -{s}]", "[tf.multiply(grad, -{s})]",
          "[tf.scalar_mul(-{s}, grad)]", "[tf.clip_by_value(grad, -{s}, {s})]", "[grad * {s}]"]
EXTRAS = [
    "",
    "# helpers for the domain classifier\n",
    'def unrelated(a):\n    """Not an override."""\n    return a * 2\n\n\n',
]


def legacy_module(choose) -> tuple[str, str]:
    s, fn = choose(SCALES), choose(["flip_gradient", "grad_reverse", "reverse"])
    name, register, receiver, body = choose(list(NAMES.values())), choose(REGISTER), choose(RECEIVERS), choose(BODIES)
    returns_in_block = choose([True, False])
    use = ("        return tf.identity(x)\n" if returns_in_block
           else "        y = tf.identity(x)\n    return y\n")
    source = (
        "import tensorflow as tf\nfrom tensorflow.python.framework import ops\n\n\n" + choose(EXTRAS)
        + f"def {fn}(x, {s}=1.0):\n    {name}\n\n    @{register}(grad_name)\n    def _grad(op, grad):\n"
        f"        return {body.format(s=s)}\n\n    {receiver}.gradient_override_map({{\"Identity\": grad_name}}):\n"
        + use
    )
    return source, f"{fn}(x, 0.4)"


def _check(source, use_runtime):
    result = migrate_code(source, use_runtime=use_runtime)
    assert result.diagnostics == []
    cst.parse_module(result.code)
    assert "gradient_override_map" not in result.code and "RegisterGradient" not in result.code
    assert migrate_code(result.code, use_runtime=use_runtime).code == result.code
    return result.code


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data(), st.booleans())
def test_generated_modules_migrate_cleanly(data, use_runtime):
    source, _ = legacy_module(lambda options: data.draw(st.sampled_from(options)))
    _check(source, use_runtime)


def test_a_sample_matches_tf1_numerically(tmp_path):
    pytest.importorskip("tensorflow")
    cases = []
    for seed in range(6):
        rng = random.Random(seed)
        source, entry = legacy_module(rng.choice)
        case = tmp_path / f"gen{seed}"
        case.mkdir()
        (case / "before.py").write_text(source)
        (case / "after.py").write_text(_check(source, use_runtime=False))
        (case / "after_runtime.py").write_text(_check(source, use_runtime=True))
        (case / "case.json").write_text(json.dumps({"entry": entry}))
        cases.append(case)
    out = tmp_path / "ref.npz"
    subprocess.run([sys.executable, str(harness.CASES.parent / "tf1_runner.py"), str(out), *map(str, cases)],
                   check=True, timeout=600)
    ref = np.load(out)
    for case in cases:
        assert f"{case.name}/error" not in ref.files, str(ref.get(f"{case.name}/error"))
        for file in ("after.py", "after_runtime.py"):
            for mode in ("eager", "function"):
                y, grads = harness.run_tf2(case, file, mode)
                np.testing.assert_array_equal(y, ref[f"{case.name}/y"])
                np.testing.assert_allclose(grads[0], ref[f"{case.name}/g0"], rtol=1e-5, atol=1e-5)
