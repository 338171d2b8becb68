# prep and inspect end to end: every input format, every bad input, atomic output, two ranks,
# h5py reading prep's output, and the real Fashion-MNIST (about 2 s).
slimtrain_add_e2e(NAME e2e_prep COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/prep.sh TIMEOUT 120
                  LABELS data)
# prep images: folders written by python3-pil, every pixel against PIL, np 2 = np 1, every bad
# file and folder, --skip-bad, and a short training run on the result (about 25 s).
slimtrain_add_e2e(NAME e2e_prep_images COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/prep_images.sh
                  TIMEOUT 180 LABELS data)
# prep text: CSV, TSV and gzipped JSONL (pairs), the tokenizer trained and stored, ids equal to
# python3-sentencepiece's, byte-identical at np 1, 2, 3, every bad record, --skip-bad, the fortunes
# demo set and a short text-bow run on it (about 40 s).
slimtrain_add_e2e(NAME e2e_prep_text COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/prep_text.sh TIMEOUT 300
                  LABELS data)
# Text files as people have them: unquoted TSV, byte order marks, bad bytes, labels 1..4, -2..2
# and 5,000 names (a 5,000-class run and its metrics.jsonl), macro-F1 over the classes present,
# default vocabularies, 5 KB texts, a 50 MB record cut and refused, an np 2 error printed once.
slimtrain_add_e2e(NAME e2e_text_as_found COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/text_as_found.sh
                  TIMEOUT 300 LABELS data)

# Every fuzz target (IDX, CSV, text, NPY, HDF5, checkpoint, INI): a separate clang-14 build of fuzz/
# inside this build tree, seeds from fuzz/seeds.sh, ~10 s per target. Skipped (exit 77) without
# clang-14 or libclang-rt-14-dev.
slimtrain_add_e2e(NAME e2e_fuzz_smoke
                  COMMAND ${PROJECT_SOURCE_DIR}/fuzz/smoke.sh ${CMAKE_BINARY_DIR}/fuzz-smoke 10
                          $<TARGET_FILE:slimtrain>
                  TIMEOUT 420 LABELS fuzz data)

# Files users write with h5py: mean/std on /train/x only or on none (computed at load time with a
# note, np 2), a file with only /train trained with --eval-every 0 (about 15 s).
slimtrain_add_e2e(NAME e2e_user_files COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/user_files.sh TIMEOUT 180
                  LABELS data train)

# Files that crash or hang HDF5 itself (found by fuzz_hdf5): train, eval and inspect exit 2 naming
# the file and the object, the hang at --io-timeout (about 15 s).
slimtrain_add_e2e(NAME e2e_damaged_hdf5 COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/damaged_hdf5.sh
                  TIMEOUT 120 LABELS data)
# Files from the wild (made by the test): a frozen TorchScript module, one with an operator
# LibTorch lacks, an HDF5 file left open for write, an LZF-compressed dataset, an external link
# to a missing file: exit 2 in one line naming the cause, no run directory (about 15 s).
slimtrain_add_e2e(NAME e2e_wild_files COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/wild_files.sh
                  TIMEOUT 180 LABELS data)
# Stream mode's peak memory over 2^20 and 2^28 rows (files of unwritten chunks, a few KiB),
# equal within 16 MiB; 2^50 rows refused before training (about 20 s).
slimtrain_add_e2e(NAME e2e_stream_memory COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/stream_memory.sh
                  TIMEOUT 180 LABELS data)
# Text in the encodings and shapes people have: UTF-16 by its mark or --encoding, cp1252, GB18030,
# Shift JIS; labels checked as texts; headers as pandas reads them, --no-header; 1.0 labels; one
# class; column numbers from 0; outputs refused before work; errors once at np 2 (about 15 s).
slimtrain_add_e2e(NAME e2e_text_encodings COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/text_encodings.sh
                  TIMEOUT 90 LABELS data)
