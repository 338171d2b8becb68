"""What hf_models.py and hf_vl.py share: a prediction file's logits against the reference's."""
import h5py
import numpy as np


def against(want, pred, what, min_spread=0.05, tolerance=1e-4):
    """/logits of PRED equal `want` within `tolerance`; the reference must vary (else the test
    is weak); prints the gap."""
    with h5py.File(pred, "r") as f:
        got = f["logits"][()]
    assert got.shape == want.shape, (got.shape, want.shape)
    gap = float(np.abs(got - want).max())
    assert gap < tolerance, f"logits differ from transformers' by {gap}"
    spread = float(want.std(0).min())
    assert spread > min_spread, f"the reference's logits hardly vary ({spread}): a weak test"
    print(f"{len(got)} {what}: logits within {gap:.1e} of transformers' (spread {spread:.2f})")
