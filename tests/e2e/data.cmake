# prep and inspect end to end: every input format, every bad input, atomic output, two ranks,
# h5py reading prep's output, and the real Fashion-MNIST (about 2 s).
slimtrain_add_e2e(NAME e2e_prep COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/prep.sh TIMEOUT 120
                  LABELS data)
