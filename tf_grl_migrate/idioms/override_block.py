"""The override block itself, ``with <graph>.gradient_override_map({...}):``, whatever its targets:
the map must be a literal the tool can read, the receiver provably a ``tf.Graph``, the map entered
by ``with``, and every op the block makes of a mapped type a call (or ``*`` / ``-``) the rewrite
can wrap; a block that makes none is dissolved. Decided by analysis.Planner.analyze_site; the
messages are here (no libcst here: this module's messages are plain text)."""

from __future__ import annotations

from .base import Idiom, source

IDIOM = Idiom(
    name="override_block",
    summary="with g.gradient_override_map({...}): the map, the graph and the ops made in the block",
    codes=("GRL101", "GRL104", "GRL105", "GRL108", "GRL111", "GRL113", "GRL203"),
    examples={
        "GRL101": source("""
            import tensorflow as tf


            def f(x):
                with tf.get_default_graph().gradient_override_map({"Sign": "Identity"}):
                    return encoder(x)
            """),
        "GRL104": source("""
            import tensorflow as tf


            def f(x):
                with tf.get_default_graph().gradient_override_map({"NoSuchOp": "Identity"}):
                    return tf.identity(x)
            """),
        "GRL105": source("""
            import tensorflow as tf


            def f(x, mapping):
                with tf.get_default_graph().gradient_override_map(mapping):
                    return tf.sign(x)
            """),
        "GRL108": source("""
            import tensorflow as tf


            def f(x):
                with tf.get_default_graph().gradient_override_map({"Sign": "Identity"}) as context:
                    return tf.sign(x)
            """),
        "GRL111": source("""
            import tensorflow as tf


            def f(x):
                context = tf.get_default_graph().gradient_override_map({"Sign": "Identity"})
                return tf.sign(x)
            """),
        "GRL113": source("""
            import tensorflow as tf


            def f(x, graph):
                with graph.gradient_override_map({"Sign": "Identity"}):
                    return tf.sign(x)
            """),
        "GRL203": source("""
            import tensorflow as tf


            def f(x):
                with tf.get_default_graph().gradient_override_map({"cast": "Identity"}):
                    return tf.sign(x)
            """),
    },
    cases=("graph_receivers_the_tool_can_prove", "override_dict_variable", "combined_with_items_name_scope",
           "calls_proven_not_to_create_the_overridden_op", "helper_function_of_the_module_in_block",
           "helper_whose_override_block_does_nothing", "helper_with_an_override_block_of_its_own",
           "map_key_that_is_no_op_type"),
)

OUTSIDE_WITH = ("gradient_override_map is entered outside a `with` statement; TF2 ignores it, so rewrite the "
                "affected ops by hand with @tf.custom_gradient")

TAKEN_AS_VALUE = ("a graph's gradient_override_map is taken as a value, to be entered where the tool cannot follow "
                  "it; TF2 ignores it however it is entered, so rewrite the affected ops by hand with "
                  "@tf.custom_gradient")

PRIVATE_MAP = (
    "this code uses the graph's private `_gradient_override_map` dict, which TF2 ignores like the map itself; "
    "rewrite the affected ops by hand with @tf.custom_gradient (or use tf_grl_migrate.override_gradients where "
    "the gradient is taken)")


def unknown_op(op_name: str, hint: bool = True) -> str:
    """GRL104; ``hint``: say that ``--use-runtime`` migrates the block (not said under it)."""
    from .. import ops

    runtime = (f", or migrate with `--use-runtime`, which keeps the registrations and enters "
               f"tf_grl_migrate.gradient_override_map (TF1's meaning for '{op_name}' ops too)"
               if hint and ops.is_registered_op_type(op_name) and op_name not in ops.PY_FUNC_TYPES else "")
    if hint and op_name in ops.PY_FUNC_TYPES:
        runtime = ("; where the block is the py_func recipe (`tf.RegisterGradient(name)(grad)`, then one "
                   "`tf.py_func(...)` under the map), `--use-runtime` migrates it to tf_grl_migrate.py_func(..., "
                   "grad=grad): tf.numpy_function under tf.custom_gradient")
    return (f"op type '{op_name}' is not in tf-grl-migrate's op table; wrap that op by hand in a "
            f"@tf.custom_gradient function (TF2 ignores gradient_override_map){runtime}")


def not_a_graph(func: str) -> str:
    return (f"`{func}` is not provably tf.Graph.gradient_override_map (a wrapper, or a receiver the tool cannot "
            "resolve to a graph); TF2 ignores graph gradient overrides however they are entered, so wrap the "
            "overridden ops yourself in a @tf.custom_gradient function (or bind the graph with "
            "`g = tf.get_default_graph()` where the tool can see it)")


def recipe(shown: str) -> str:
    """The runtime answer for a model-wide override (guided backprop, deconvnet, a quantised
    model): the same map (``shown``, as the source spells it), entered through the runtime, which
    gives TF2 TF1's meaning (ops of a mapped type created in the block)."""
    shown = " ".join(shown.split())
    return (f"or keep the registrations and enter the same map through the runtime, which gives TF2 TF1's "
            f"meaning: `with tf_grl_migrate.gradient_override_map({shown}):` around the same code (docs/runtime.md: "
            "\"Guided backprop and other model-wide overrides\")")


RUNTIME_HINT = ("`tf-grl-migrate --use-runtime` migrates this block: it keeps the registrations and enters "
                "tf_grl_migrate.gradient_override_map instead, which gives TF2 TF1's meaning")


def phantom_keys(keys: str, hint: str) -> str:
    """GRL203: map keys that cannot be op types (``keys``, as written), ``hint``: what may have been meant."""
    return (f"note: {keys} in this override map is no op type (op types are CamelCase, such as 'Cast' "
            f"or 'Maximum'), so TF1 overrode nothing for it and neither does the migrated code; if {hint} "
            "was meant, write that gradient with @tf.custom_gradient")
