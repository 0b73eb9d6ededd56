"""Trainers: one loop (BaseTrainer) and thin seq2seq and GAN subclasses.

A model's trainer says only how to call the model and which per-example losses to take::

    class FastSpeechTrainer(Seq2SeqBasedTrainer):
        def call_model(self, batch, training):
            return self.model(batch["input_ids"], batch["speaker_ids"], batch["duration_gts"], training=training)

        def compute_per_example_losses(self, batch, outputs):   # each value is [B]
            return {"mel_loss": masked_mae(batch["mel_gts"], outputs["mel_after"], batch["mel_lengths"]),
                    "duration_loss": ...}

    strategy = return_strategy()
    trainer_config, rest = TrainerConfig.split(yaml_dict)
    trainer = FastSpeechTrainer(config=trainer_config, strategy=strategy, is_mixed_precision=False)
    with strategy.scope():
        model = build_and_call_once(...)
        trainer.compile(model, create_optimizer(rest["optimizer_params"], trainer_config.train_max_steps))
    trainer.fit(train_dataset, valid_dataset, resume=args.resume)  # datasets batched with the global batch
"""

from tensorflow_tts.trainers.base_trainer import BaseTrainer, NonFiniteTrainingError, OptimizationGroup
from tensorflow_tts.trainers.gan_trainer import GanBasedTrainer
from tensorflow_tts.trainers.seq2seq_trainer import Seq2SeqBasedTrainer
