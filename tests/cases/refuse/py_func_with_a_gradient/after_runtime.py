"""The py_func-with-a-gradient recipe copied from answer to answer: a random name, the gradient
registered under it, and the PyFunc op made under a map to that name."""
import numpy as np
import tensorflow as tf
import tf_grl_migrate


def py_func(func, inp, Tout, stateful=True, name=None, grad=None):
    # a unique name, so that two calls do not register one name twice
    rnd_name = "PyFuncGrad" + str(np.random.randint(0, 1e8))
    return tf_grl_migrate.py_func(func, inp, Tout, stateful=stateful, name=name, grad=grad, override_types=("PyFunc", "PyFuncStateless"))


def _square_grad(op, grad):
    return grad * 2.0 * op.inputs[0]


def _product_and_sum_grad(op, grad_product, grad_sum):
    x, y = op.inputs
    return [grad_product * y + grad_sum, grad_product * x + grad_sum]


def square(x):
    y = py_func(np.square, [x], tf.float32, name="square", grad=_square_grad)
    return tf.reshape(y, x.shape.as_list())


def product_and_sum(x, y):
    product, total = py_func(lambda a, b: (a * b, a + b), [x, y], [tf.float32, tf.float32], stateful=False,
                             grad=_product_and_sum_grad)
    return tf.reshape(product * 2.0 + total, x.shape.as_list())
