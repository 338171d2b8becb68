"""A classifier written and scripted with PyTorch 2.x (the venv's), for the interop test.

python interop_models.py OUT.pt: a small attention model over the rows of an 8x8 image (each row
a token) that calls F.scaled_dot_product_attention, which LibTorch 1.13 does not have, and checks
that it matches the same attention written out (so the file really holds the fused operator).
"""
import sys
import warnings

import torch
import torch.nn.functional as F


class RowAttention(torch.nn.Module):
    def __init__(self, width: int = 8, hidden: int = 16, heads: int = 2, classes: int = 4):
        super().__init__()
        self.heads = heads
        self.embed = torch.nn.Linear(width, hidden)
        self.position = torch.nn.Parameter(0.1 * torch.randn(width, hidden))  # rows are tokens
        self.qkv = torch.nn.Linear(hidden, 3 * hidden)
        self.out = torch.nn.Linear(hidden, hidden)
        self.head = torch.nn.Linear(hidden, classes)

    def attend(self, x: torch.Tensor, fused: bool) -> torch.Tensor:
        b, t = x.shape[0], x.shape[-2]
        h = self.embed(x.reshape(b, t, x.shape[-1])) + self.position[:t]
        q, k, v = self.qkv(h).reshape(b, t, 3, self.heads, -1).permute(2, 0, 3, 1, 4).unbind(0)
        if fused:
            a = F.scaled_dot_product_attention(q, k, v)
        else:
            a = torch.softmax(q @ k.transpose(-2, -1) / (q.shape[-1] ** 0.5), dim=-1) @ v
        return self.head((h + self.out(a.transpose(1, 2).reshape(b, t, -1))).mean(1))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.attend(x, True)


def main() -> None:
    torch.manual_seed(0)
    model = RowAttention()
    x = torch.randn(5, 1, 8, 8)
    with torch.no_grad():
        torch.testing.assert_close(model.attend(x, True), model.attend(x, False))
    with warnings.catch_warnings():  # 2.10+ warns that TorchScript is deprecated
        warnings.simplefilter("ignore")
        scripted = torch.jit.script(model)
    code = scripted.code + scripted.attend.code
    assert "scaled_dot_product_attention" in code, code
    scripted.save(sys.argv[1])


if __name__ == "__main__":
    main()
