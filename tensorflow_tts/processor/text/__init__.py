"""Text normalisation shared by the front ends: cleaners, offline English G2P, numbers, German, Korean, sentence splitting."""
