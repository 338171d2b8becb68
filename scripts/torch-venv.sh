#!/usr/bin/env bash
# Installs PyTorch 2.x from the Python package index into a virtual environment, for the second
# LibTorch build (TORCH=pip scripts/build.sh), the 2.x peers and the tests' Python side
# (transformers, tokenizers, safetensors, h5py, pillow, peft; sentencepiece and protobuf, with which
# transformers converts a SentencePiece model to a tokenizer.json). Called by `scripts/install-deps.sh --torch pip`.
#   TORCH_VENV   where (default: .torch-venv in the checkout, ignored by git)
#   TORCH_PIP    the pip requirement for torch (default: the pinned version below)
# Idempotent: a venv whose stamp matches the pins is left as it is (a second run takes a second).
#
# The wheel is a CUDA build (2.11.0+cu130). Its CUDA libraries come from /usr/local/cuda (the
# toolkit these machines carry: cudart, cuBLAS, cuDNN, cuFFT, cuRAND, cuSOLVER, cuSPARSE, NCCL,
# NVRTC, CUPTI) and from three wheels for the three it lacks (cuSPARSELt, NVSHMEM, cuFile): 0.76 GB
# to download and 1.5 GB installed, in ~30 s here, against 2.6 GB and 4.6 GB in ~70 s for the
# wheel's full dependency set (measured on 2026-11-27). Where no /usr/local/cuda exists,
# TORCH_CUDA_FROM=pip installs the wheel's own dependencies instead.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
venv=${TORCH_VENV:-$root/.torch-venv}
torch_req=${TORCH_PIP:-torch==2.11.0}
cuda_from=${TORCH_CUDA_FROM:-$([ -e /usr/local/cuda/lib64/libcudart.so.13 ] && echo system || echo pip)}
# What torch 2.11.0+cu130 links that /usr/local/cuda (CUDA 13.0) does not carry.
cuda_extra=(nvidia-cusparselt-cu13==0.8.0 nvidia-nvshmem-cu13==3.4.5 nvidia-cufile==1.15.1.6)
# torch's pure-Python dependencies (installed without its CUDA wheels), and the tests' packages.
python_pkgs=(filelock typing-extensions "sympy>=1.13.3" "networkx>=2.5.1" jinja2 "fsspec>=0.8.5"
  "setuptools<82" numpy==2.4.6 h5py==3.16.0 transformers==5.24.0 tokenizers==0.23.3
  safetensors==0.8.0 pillow==13.0.0 sentencepiece==0.2.3 protobuf==7.36.2 peft==0.21.2)
stamp="$torch_req cuda:$cuda_from ${cuda_extra[*]} ${python_pkgs[*]}"

if [ -f "$venv/.slimtrain-stamp" ] && [ "$(cat "$venv/.slimtrain-stamp")" = "$stamp" ] &&
  "$venv/bin/python" -c "import torch" 2>/dev/null; then
  echo "torch-venv: $venv has $("$venv/bin/python" -c 'import torch; print(torch.__version__)')"
  exit 0
fi

# The first python3 that can make a venv with pip (pyenv's here; Debian's needs python3-venv).
py=
for c in python3 /usr/bin/python3; do
  if command -v "$c" >/dev/null && "$c" -c "import venv, ensurepip" 2>/dev/null; then py=$c; break; fi
done
if [ -z "$py" ]; then
  echo "torch-venv: no python3 with the venv and ensurepip modules (Debian: apt-get install python3-venv)" >&2
  exit 1
fi
echo "torch-venv: $torch_req into $venv ($($py --version); CUDA libraries from $cuda_from)"
t0=$SECONDS
rm -rf "$venv"
"$py" -m venv "$venv"
pip=("$venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-input)
if [ "$cuda_from" = system ]; then
  "${pip[@]}" --no-deps "$torch_req" "${cuda_extra[@]}"
  # pip then says torch's CUDA wheels are missing: they are, by design (above).
  log=$(mktemp)
  rc=0
  "${pip[@]}" "${python_pkgs[@]}" >"$log" 2>&1 || rc=$?
  grep -vE "dependency resolver does not|requires (nvidia-|triton|cuda-)" "$log" || true
  rm -f "$log"
  [ "$rc" = 0 ] || { echo "torch-venv: pip failed (exit $rc)" >&2; exit 1; }
else
  "${pip[@]}" "$torch_req" "${python_pkgs[@]}"
fi
"$venv/bin/python" -c "import torch, h5py, transformers; print('torch-venv: torch', torch.__version__, 'cuda', torch.version.cuda)"
echo "$stamp" >"$venv/.slimtrain-stamp"
echo "torch-venv: done in $((SECONDS - t0)) s, $(du -sh "$venv" | cut -f1)"
