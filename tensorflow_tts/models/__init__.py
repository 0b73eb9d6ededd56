"""models."""
from tensorflow_tts.models.fastspeech import TFFastSpeech
from tensorflow_tts.models.fastspeech2 import TFFastSpeech2
from tensorflow_tts.layers.pqmf import TFPQMF  # 1.8 exported it here
from tensorflow_tts.models.hifigan import (
    TFHifiGANDiscriminator,
    TFHifiGANGenerator,
    TFHifiGANMultiPeriodDiscriminator,
    TFHifiGANPeriodDiscriminator,
)
from tensorflow_tts.models.mb_melgan import TFMBMelGANGenerator
from tensorflow_tts.models.melgan import (
    TFMelGANDiscriminator,
    TFMelGANGenerator,
    TFMelGANMultiScaleDiscriminator,
)
from tensorflow_tts.models.parallel_wavegan import (
    TFParallelWaveGANDiscriminator,
    TFParallelWaveGANGenerator,
)
from tensorflow_tts.models.tacotron2 import TFTacotron2
