"""`get_config` for layers and models whose `__init__` keeps each hyper-parameter as an attribute of the same name."""


class HyperParameterConfig:
    """Mixin: `get_config()` is the base class's config plus every name in `hyperparameters`.

    List the `__init__` arguments in `hyperparameters`; `from_config` then rebuilds the
    layer from them, as Keras expects.
    """

    hyperparameters = ()

    def get_config(self):
        config = super().get_config()
        config.update({name: getattr(self, name) for name in self.hyperparameters})
        return config
