import tensorflow as tf
import tf_grl_migrate


async def quantize(x, coro):
    with tf_grl_migrate.gradient_override_map({"Round": "Identity"}):
        y = await coro(x)
    return y


def build_inside_override():
    with tf_grl_migrate.gradient_override_map({"Sign": "Identity"}):
        import mymodel  # its module code builds the graph
    return mymodel


def star_import_inside_override():
    with tf_grl_migrate.gradient_override_map({"Sign": "Identity"}):
        from mymodel.layers import *  # noqa: F403


def context_object_inside_override(scope):
    with tf_grl_migrate.gradient_override_map({"Sign": "Identity"}):
        with scope:  # scope.__enter__ runs code the tool cannot see
            pass
