# Resume end to end: kill -9 mid-run then --resume auto gives bit-identical parameters; corrupt
# and mismatched checkpoints (about 30 s). Signals: SIGUSR1/SIGTERM on one rank or on mpirun ->
# agreed checkpoint, exit 75, resume (about 30 s).
slimtrain_add_e2e(NAME e2e_resume_bitwise COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/resume_bitwise.sh
                  TIMEOUT 240 LABELS resume torch)
slimtrain_add_e2e(NAME e2e_signal_stop COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/signal_stop.sh
                  TIMEOUT 240 LABELS resume)
# jobs/train.sbatch without Slurm: MAX_RESTARTS counts relaunches in a row without a new
# checkpoint; a failure report per launch (about 60 s).
slimtrain_add_e2e(NAME e2e_job_restarts COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/job_restarts.sh
                  TIMEOUT 300 LABELS resume)
# Two ranks each: CTest counts them as two processors.
set_tests_properties(e2e_resume_bitwise e2e_signal_stop e2e_job_restarts PROPERTIES PROCESSORS 2)
# --weights bf16: bf16 weights with float32 masters learn as fp32 does, and resume bit for bit from
# checkpoints that hold the masters; what it cannot go with is exit 2 (about 60 s).
slimtrain_add_e2e(NAME e2e_bf16_weights COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/bf16_weights.sh
                  TIMEOUT 300 LABELS resume torch)
set_tests_properties(e2e_bf16_weights PROPERTIES PROCESSORS 2)
