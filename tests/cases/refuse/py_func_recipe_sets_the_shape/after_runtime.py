"""The py_func recipe as most answers copy it: the result's static shape set inside the block
(TF1's PyFunc op knows none), then returned."""
import numpy as np
import tensorflow as tf
import tf_grl_migrate


def py_func(func, inp, Tout, stateful=True, name=None, grad=None):
    rnd_name = "PyFuncGrad" + str(np.random.randint(0, 1e8))
    res = tf_grl_migrate.py_func(func, inp, Tout, stateful=stateful, name=name, grad=grad, override_types=("PyFunc",))
    res[0].set_shape(inp[0].get_shape())
    return res


def _cube_grad(op, grad):
    return grad * 3.0 * tf.square(op.inputs[0])


def cube(x):
    y = py_func(lambda a: a ** 3, [x], [tf.float32], grad=_cube_grad)[0]
    return y * 2.0 + tf.reduce_sum(y) * tf.ones_like(x)
