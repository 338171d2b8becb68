#!/usr/bin/env bash
# Downloads, here (Debian 12, with its package registry), the .deb files that
# scripts/gpu/build-and-check.sh unpacks on a lent GPU machine which has CUDA, a pip PyTorch
# (CUDA LibTorch) and the NCCL wheel but neither Open MPI, parallel HDF5 nor the other -dev
# packages, and no network. They land in .gpu/debs (about 32 MiB); carry `.gpu` with the call:
#
#   echo /.gpu/ >>.git/info/exclude; scripts/gpu/fetch-debs.sh
#   device run: bash scripts/gpu/build-and-check.sh     (carry: [".gpu"])
#
# The list is the build and run closure of libopenmpi-dev, libhdf5-openmpi-dev, Boost
# program_options, nlohmann-json, xxHash, SentencePiece, GTest, zlib, JPEG, PNG and ICU, less what
# every Linux has (libc, libstdc++, libgcc), checked with readelf on the unpacked files.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
mkdir -p "$root/.gpu/debs"
cd "$root/.gpu/debs"
apt-get update -qq
apt-get download \
  openmpi-bin openmpi-common libopenmpi3 libopenmpi-dev libpmix2 libhwloc15 libevent-core-2.1-7 \
  libevent-pthreads-2.1-7 libfabric1 libucx0 libibverbs1 ibverbs-providers librdmacm1 libnl-3-200 \
  libnl-route-3-200 libpsm2-2 libpsm-infinipath1 libnuma1 libmunge2 libudev1 libuuid1 libatomic1 \
  libhdf5-openmpi-dev libhdf5-openmpi-103-1 libsz2 libaec0 libcurl4 libssl3 libbrotli1 libzstd1 \
  libnghttp2-14 libidn2-0 libunistring2 libpsl5 librtmp1 libssh2-1 libldap-2.5-0 libsasl2-2 \
  libgssapi-krb5-2 libkrb5-3 libk5crypto3 libkrb5support0 libcom-err2 libkeyutils1 libgnutls30 \
  libnettle8 libhogweed6 libgmp10 libp11-kit0 libtasn1-6 libffi8 \
  libboost1.74-dev libboost-program-options1.74-dev libboost-program-options1.74.0 \
  nlohmann-json3-dev libxxhash-dev libxxhash0 libsentencepiece-dev libsentencepiece0 libgtest-dev \
  zlib1g-dev zlib1g libjpeg62-turbo libjpeg62-turbo-dev libpng-dev libpng16-16 libicu-dev libicu72
du -sh "$root/.gpu/debs"
