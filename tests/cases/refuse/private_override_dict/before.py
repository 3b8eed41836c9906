import tensorflow as tf

g = tf.get_default_graph()
g._gradient_override_map["Sign"] = "Identity"
y = tf.sign(tf.constant([1.0]))
