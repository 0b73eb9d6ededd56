"""Reading a sharded dump split (tensorflow_tts.dump.shards) into tf.data examples.

Shards are the unit of reading and of distribution: the pipeline starts from the list of
shard files, so `MultiWorkerMirroredStrategy` gives each worker its own shards
(auto-shard policy FILE) instead of every worker reading the whole split.
"""

import numpy as np
import tensorflow as tf

AUTOTUNE = tf.data.AUTOTUNE
# Shards read at once when shuffling; each open shard costs one read buffer per kind.
SHARD_CYCLE_LENGTH = 4


def file_sharded(dataset):
    """`dataset` with the auto-shard policy FILE: under a multi-worker strategy each worker reads its own shards."""
    options = tf.data.Options()
    options.experimental_distribute.auto_shard_policy = tf.data.experimental.AutoShardPolicy.FILE
    return dataset.with_options(options)


def read_shards(index, features, positions, shuffle=False, seed=0):
    """One pass over the utterances at `positions` of a sharded split, decoded.

    Args:
        index: the split's ShardIndex.
        features: the DumpFeatures of an example (their kinds must be in the index).
        positions: int `(M,)`, index positions of the utterances to read; the others are skipped.
        shuffle, seed: visit the shards in a seeded order that changes every epoch (every
            new iterator) and interleave SHARD_CYCLE_LENGTH of them; without it, shards and
            records come in index order.

    Returns:
        tf.data.Dataset of dicts: `utt_ids` (tf.string scalar) and one tensor per feature,
        `(N, *inner_shape)`, or a scalar for scalar kinds.
    """
    keep = np.zeros(len(index.utt_ids), bool)
    keep[np.asarray(positions, np.int64)] = True
    starts = index.shard_starts
    shards = [shard for shard in range(index.num_shards) if keep[starts[shard] : starts[shard + 1]].any()]
    # One path list per feature, made once: built per shard it cost O(shards^2), 27 s of the first
    # batch at 7,526 shards (benchmarks/scale.py, 131,000 utterances).
    kind_paths = [index.shard_paths(feature.kind) for feature in features]
    paths = np.array([[str(column[shard]) for column in kind_paths] for shard in shards])
    files = tf.data.Dataset.from_tensor_slices((paths, starts[shards], starts[np.array(shards) + 1]))
    if shuffle:
        files = files.shuffle(len(shards), seed=seed, reshuffle_each_iteration=True)

    def read_shard(shard_paths, start, stop):
        records = tuple(tf.data.TFRecordDataset(shard_paths[column]) for column in range(len(features)))
        return tf.data.Dataset.zip((tf.data.Dataset.range(start, stop), records))

    if shuffle:
        records = files.interleave(read_shard, cycle_length=SHARD_CYCLE_LENGTH, num_parallel_calls=AUTOTUNE)
    else:
        records = files.flat_map(read_shard)
    keep_table = tf.constant(keep)
    utt_ids = tf.constant(index.utt_ids)

    def decode(position, values):
        example = {"utt_ids": tf.gather(utt_ids, position)}
        for feature, value in zip(features, values):
            decoded = tf.io.decode_raw(value, tf.as_dtype(feature.dtype), little_endian=True)
            example[feature.key] = tf.reshape(decoded, [] if feature.scalar else [-1, *feature.inner_shape])
        return example

    examples = records.filter(lambda position, values: tf.gather(keep_table, position))
    return file_sharded(examples.map(decode, num_parallel_calls=AUTOTUNE, deterministic=True))
