"""Loads an exported weights.h5 into a PyTorch module with the same names and checks every value.

usage: ckpt_export_check.py WEIGHTS.h5 STEP   (exit 77 when torch or h5py is missing)
The values are recomputed from each name as ckpt_fixture.cpp wrote them.
"""
import json
import sys

try:
    import h5py
    import numpy as np
    import torch
except ImportError as e:
    print(f"skip: {e}")
    sys.exit(77)


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = torch.nn.Conv2d(1, 4, 3)
        self.bn1 = torch.nn.BatchNorm2d(4)
        self.fc = torch.nn.Linear(64, 3)


def expected(name, like, step):
    base = sum(name.encode()) % 97 + step
    if like.is_floating_point():
        return (torch.arange(like.numel(), dtype=torch.float64) * 0.01 + base).reshape(like.shape).to(like.dtype)
    return torch.full_like(like, base)


def main():
    path, step = sys.argv[1], int(sys.argv[2])
    with h5py.File(path, "r") as f:
        state = {k: torch.as_tensor(np.asarray(f[k][()])) for k in f.keys()}
        spec = json.loads(f.attrs["model_spec"])
        stored_step = int(f.attrs["step"])
    assert spec == {"name": "fixture", "classes": 3}, spec
    assert stored_step == step, stored_step
    net = Net()
    net.load_state_dict(state, strict=True)
    for name, value in net.state_dict().items():
        want = expected(name, value, step)
        assert value.dtype == want.dtype, (name, value.dtype, want.dtype)
        assert torch.equal(value, want), f"{name} differs from what C++ saved"
    print(f"ok: {len(state)} tensors of step {step} load into torch and match")


main()
