"""Read TensorBoard event files written by the trainer."""

import glob
import os

import tensorflow as tf


def read_events(logdir):
    """{tag: {"plugin": name, "steps": [..], "values": [...]}} of every event file under logdir."""
    found = {}
    for path in sorted(glob.glob(os.path.join(logdir, "events.out.tfevents.*"))):
        for event in tf.compat.v1.train.summary_iterator(path):
            for value in event.summary.value:
                entry = found.setdefault(value.tag, {"plugin": value.metadata.plugin_data.plugin_name, "steps": [], "values": []})
                if value.metadata.plugin_data.plugin_name:
                    entry["plugin"] = value.metadata.plugin_data.plugin_name
                entry["steps"].append(event.step)
                entry["values"].append(tf.make_ndarray(value.tensor) if value.HasField("tensor") else value.simple_value)
    return found
