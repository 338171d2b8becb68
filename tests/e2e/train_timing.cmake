# The step-time components of train events and the done event's steady-state samples_per_s
# (without warm-up and evaluation time), which bench/train reports (about 10 s).
slimtrain_add_e2e(NAME e2e_train_timing COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/train_timing.sh
                  TIMEOUT 120 LABELS train)
# bench/gpu/run.sh rehearsed on the CPU (SMALL=1 DEVICE=cpu) so the one call a lent GPU machine
# gets cannot rot: every row's RESULT line in $OUT/results.txt as it finishes, and a run whose
# BUDGET ends after the first row keeps that row's line and names the rest skipped=budget (60-75 s
# on 2 cores; it times a budget, so it takes both cores). The peers need the venv's Python.
set(_bench_python "${SLIMTRAIN_TORCH_PYTHON}")
if(NOT _bench_python AND EXISTS "${PROJECT_SOURCE_DIR}/.torch-venv/bin/python")
  set(_bench_python "${PROJECT_SOURCE_DIR}/.torch-venv/bin/python")
endif()
slimtrain_add_e2e(NAME e2e_bench_gpu_rehearsal COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/bench_gpu_rehearsal.sh
                  TIMEOUT 225 LABELS train ENV SLIMTRAIN_TORCH_PYTHON=${_bench_python})
set_tests_properties(e2e_bench_gpu_rehearsal PROPERTIES PROCESSORS 2)
