# The step-time components of train events and the done event's steady-state samples_per_s
# (without warm-up and evaluation time), which bench/train reports (about 10 s).
slimtrain_add_e2e(NAME e2e_train_timing COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/train_timing.sh
                  TIMEOUT 120 LABELS train)
