class Config:
    def __init__(self):
        self.gradient_override_map = {"Identity": "FlipGradient"}

    def lookup(self, op_type):
        return self.gradient_override_map.get(op_type)


settings = Config()
settings.gradient_override_map["Sign"] = "Identity"
