"""TorchScript classifiers as users write them, scripted with python3-torch for the e2e tests.

python3 torchscript_models.py OUT_DIR C H W CLASSES writes into OUT_DIR:
  hf.pt       HuggingFace style: forward(x, labels=None) -> (loss or None, logits, hidden [B,T,H]),
              and an embed method
  dict.pt     forward(x) -> {"logits": ..., "features": ...}
  bn.pt       a CNN with BatchNorm and Dropout, forward(x) -> logits
  frozen.pt   a frozen "backbone" (requires_grad False) under a trainable head
  plain.pt    a small MLP returning logits only (the peer check trains it in Python too)
  cnn.pt      slimtrain's built-in cnn-small, layer for layer (bench/train compares the two)
  wide.pt     hf.pt's architecture with another hidden width (a different module)
  buffers.pt  attention over the image's rows with a bool causal mask and int32 position ids as
              buffers (neither a float nor an int64)
  tied.pt     two layers sharing one weight (tied, as encoder/decoder or embedding pairs are)
"""
import sys
from typing import Dict, Optional, Tuple

import torch
import torch.nn.functional as F


class HuggingFaceStyle(torch.nn.Module):
    def __init__(self, inputs: int, classes: int, hidden: int = 32, tokens: int = 16):
        super().__init__()
        self.tokens = tokens
        self.encoder = torch.nn.Linear(inputs, hidden)
        self.head = torch.nn.Linear(hidden, classes)

    def forward(
        self, x: torch.Tensor, labels: Optional[torch.Tensor] = None
    ) -> Tuple[Optional[torch.Tensor], torch.Tensor, torch.Tensor]:
        h = torch.relu(self.encoder(x.flatten(1)))
        hidden_states = h.unsqueeze(1).expand(-1, self.tokens, -1).contiguous()
        logits = self.head(h)
        loss: Optional[torch.Tensor] = None
        if labels is not None:
            loss = F.cross_entropy(logits, labels)
        return loss, logits, hidden_states

    @torch.jit.export
    def embed(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(self.encoder(x.flatten(1)))


class DictOutput(torch.nn.Module):
    def __init__(self, inputs: int, classes: int):
        super().__init__()
        self.body = torch.nn.Linear(inputs, 24)
        self.out = torch.nn.Linear(24, classes)

    def forward(self, x: torch.Tensor) -> Dict[str, torch.Tensor]:
        features = torch.tanh(self.body(x.flatten(1)))
        return {"logits": self.out(features), "features": features}


class BatchNormDropout(torch.nn.Module):
    def __init__(self, channels: int, height: int, width: int, classes: int):
        super().__init__()
        self.conv = torch.nn.Conv2d(channels, 8, 3, padding=1)
        self.bn = torch.nn.BatchNorm2d(8)
        self.drop = torch.nn.Dropout(0.3)
        self.fc = torch.nn.Linear(8 * height * width, classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = torch.relu(self.bn(self.conv(x)))
        return self.fc(self.drop(h.flatten(1)))


class Frozen(torch.nn.Module):
    def __init__(self, inputs: int, classes: int):
        super().__init__()
        self.backbone = torch.nn.Linear(inputs, 32)
        for p in self.backbone.parameters():
            p.requires_grad_(False)
        self.head = torch.nn.Linear(32, classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(torch.relu(self.backbone(x.flatten(1))))


class Plain(torch.nn.Module):
    def __init__(self, inputs: int, classes: int):
        super().__init__()
        self.fc1 = torch.nn.Linear(inputs, 32)
        self.fc2 = torch.nn.Linear(32, classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc2(torch.relu(self.fc1(x.flatten(1))))


class CnnSmall(torch.nn.Module):
    """src/model/cnn_small.cpp as a user would write it in Python."""

    def __init__(self, channels: int, height: int, width: int, classes: int):
        super().__init__()
        self.conv1 = torch.nn.Conv2d(channels, 32, 3, padding=1)
        self.conv2 = torch.nn.Conv2d(32, 64, 3, padding=1)
        self.fc1 = torch.nn.Linear(64 * (height // 4) * (width // 4), 128)
        self.fc2 = torch.nn.Linear(128, classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = F.max_pool2d(torch.relu(self.conv1(x)), 2)
        h = F.max_pool2d(torch.relu(self.conv2(h)), 2)
        return self.fc2(torch.relu(self.fc1(h.flatten(1))))


class Buffers(torch.nn.Module):
    def __init__(self, channels: int, height: int, width: int, classes: int):
        super().__init__()
        tokens = channels * height
        self.width = width
        self.register_buffer("causal", torch.tril(torch.ones(tokens, tokens, dtype=torch.bool)))
        self.register_buffer("positions", torch.arange(tokens, dtype=torch.int32))
        self.position = torch.nn.Embedding(tokens, width)
        self.proj = torch.nn.Linear(width, 16)
        self.head = torch.nn.Linear(16, classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = x.reshape(x.shape[0], -1, self.width) + self.position(self.positions.long())
        scores = (h @ h.transpose(1, 2)).masked_fill(~self.causal, float("-inf"))
        h = torch.softmax(scores / self.width, dim=-1) @ h
        return self.head(torch.tanh(self.proj(h)).mean(1))


class Tied(torch.nn.Module):
    def __init__(self, inputs: int, classes: int):
        super().__init__()
        self.embed_in = torch.nn.Linear(inputs, 16)
        self.mix = torch.nn.Linear(16, 16)
        self.unmix = torch.nn.Linear(16, 16, bias=False)
        self.unmix.weight = self.mix.weight
        self.head = torch.nn.Linear(16, classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = torch.tanh(self.embed_in(x.flatten(1)))
        h = torch.tanh(self.unmix(torch.tanh(self.mix(h))))
        return self.head(h)


def main() -> None:
    out = sys.argv[1]
    c, h, w, classes = (int(v) for v in sys.argv[2:6])
    inputs = c * h * w
    torch.manual_seed(7)
    models = {
        "hf": HuggingFaceStyle(inputs, classes),
        "dict": DictOutput(inputs, classes),
        "bn": BatchNormDropout(c, h, w, classes),
        "frozen": Frozen(inputs, classes),
        "plain": Plain(inputs, classes),
        "cnn": CnnSmall(c, h, w, classes),
        "wide": HuggingFaceStyle(inputs, classes, hidden=40),
        "buffers": Buffers(c, h, w, classes),
        "tied": Tied(inputs, classes),
    }
    for name, model in models.items():
        torch.jit.script(model).save(f"{out}/{name}.pt")


if __name__ == "__main__":
    main()
