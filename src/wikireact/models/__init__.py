"""Chat models: the `provider:model` registry, the scripted model, the replaying cache, and the local model (`models.local`)."""
