"""A Keras bidirectional LSTM outside training, as one loop over time.

Keras runs ``Bidirectional(LSTM(...))`` as two loops, one per direction, and each step of each
multiplies its input by the input kernel before the recurrent product. Only the recurrent
product depends on the previous step: here the input products of both directions are one
matmul over the whole sequence before the loop, and one loop steps both directions. The
weights are the Keras layer's own (checkpoints are unchanged); the values are Keras' to float
rounding (the bias is added to the input product before the recurrent one is, not after).

Tacotron 2's encoder runs its BiLSTM so outside training (`layers.tacotron2`). On the class
defaults' encoder (120 tokens) in a float32 TFLite file this took 0.79 of the time; the whole
600-frame call took 0.985 of it there, 0.978 in the int8 file and 0.983 through Keras (ours
against ours, one process each, 15 alternated pairs, 2-core Intel Xeon).
"""

import tensorflow as tf

from tensorflow_tts.layers.zoneout_lstm import lstm_gates


def loop_form(layer):
    """Whether `bidirectional_lstm` computes ``layer``: a built ``Bidirectional`` of an LSTM that
    returns sequences, concatenates the directions and uses Keras' default activations."""
    if not isinstance(layer, tf.keras.layers.Bidirectional) or not layer.built or layer.merge_mode != "concat":
        return False
    cells = [getattr(direction, "cell", None) for direction in (layer.forward_layer, layer.backward_layer)]
    return all(
        isinstance(cell, tf.keras.layers.LSTMCell) and cell.use_bias
        and cell.activation is tf.keras.activations.tanh and cell.recurrent_activation is tf.keras.activations.sigmoid
        for cell in cells
    ) and all(direction.return_sequences and not direction.return_state and not direction.stateful
              for direction in (layer.forward_layer, layer.backward_layer))


def bidirectional_lstm(layer, inputs, mask=None):
    """``layer(inputs, mask=mask)`` outside training, for a layer `loop_form` accepts.

    Masked steps leave a direction's state as it was and output zeros, as in Keras: with
    trailing padding the backward direction starts at each sequence's last valid step.

    Args:
        layer: ``tf.keras.layers.Bidirectional(tf.keras.layers.LSTM(units, return_sequences=True))``.
        inputs: (B, T, C).
        mask: (B, T) bool, or None (every step valid).

    Returns:
        (B, T, 2 * units): forward outputs, then backward ones.
    """
    forward, backward = layer.forward_layer.cell, layer.backward_layer.cell
    units = forward.units
    dtype = inputs.dtype
    batch_size, length, channels = tf.shape(inputs)[0], tf.shape(inputs)[1], inputs.shape[-1]
    kernel = tf.cast(tf.concat([forward.kernel, backward.kernel], axis=1), dtype)  # (C, 8U)
    bias = tf.cast(tf.concat([forward.bias, backward.bias], axis=0), dtype)
    projected = tf.reshape(tf.matmul(tf.reshape(inputs, [-1, channels]), kernel) + bias, [batch_size, length, 8 * units])
    projected = tf.transpose(projected, [1, 0, 2])  # (T, B, 8U)
    # Step t takes the forward direction's time t and the backward direction's time T - 1 - t.
    steps = tf.concat([projected[:, :, : 4 * units], tf.reverse(projected[:, :, 4 * units :], axis=[0])], axis=-1)
    if mask is not None:
        mask = tf.transpose(tf.cast(mask, tf.bool))  # (T, B)
        masks = tf.stack([mask, tf.reverse(mask, axis=[0])], axis=-1)  # (T, B, 2)
    recurrent = [tf.cast(cell.recurrent_kernel, dtype) for cell in (forward, backward)]

    def direction(z, state, kernel, valid):
        h_previous, c_previous = state
        h, c = lstm_gates(z + tf.matmul(h_previous, kernel), c_previous)
        if valid is None:
            return h, (h, c)
        return tf.where(valid, h, tf.zeros_like(h)), (tf.where(valid, h, h_previous), tf.where(valid, c, c_previous))

    def body(t, states, outputs):
        z = tf.gather(steps, t)  # (B, 8U)
        valid = [None, None]
        if mask is not None:
            step_masks = tf.gather(masks, t)  # (B, 2): slices, as TFLite has no split for booleans
            valid = [step_masks[:, :1], step_masks[:, 1:]]
        forward_out, forward_state = direction(z[:, : 4 * units], states[0], recurrent[0], valid[0])
        backward_out, backward_state = direction(z[:, 4 * units :], states[1], recurrent[1], valid[1])
        outputs = (outputs[0].write(t, forward_out), outputs[1].write(length - 1 - t, backward_out))
        return t + 1, (forward_state, backward_state), outputs

    zeros = tf.zeros([batch_size, units], dtype)
    # A static batch (TFLite's batch of 1) gives the arrays the fully static element shape
    # that TFLite's builtin tensor-list lowering needs.
    arrays = tuple(tf.TensorArray(dtype, size=length, element_shape=tf.TensorShape([inputs.shape[0], units]))
                   for _ in range(2))
    _, _, arrays = tf.while_loop(
        lambda t, states, outputs: t < length, body, (tf.constant(0), ((zeros, zeros), (zeros, zeros)), arrays)
    )
    return tf.transpose(tf.concat([array.stack() for array in arrays], axis=-1), [1, 0, 2])
