CLIP_NAME = "ClipRepo"
GUIDED_NAME = "GuidedReluRepo"
