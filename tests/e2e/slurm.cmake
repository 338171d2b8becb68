# jobs/train.sbatch against a real single-node Slurm started by the test (about 60 s each): USR1
# before the time limit -> checkpoint -> exit 75 -> scontrol requeue -> the requeued job resumes
# and finishes. One test per launcher the script supports. Label "slurm" only; scripts/test.sh
# runs every test. Skipped (77) where Slurm cannot run (not root, packages missing).
foreach(launcher srun mpirun)
  set(test e2e_slurm_requeue_${launcher})
  add_test(NAME ${test} COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/slurm_requeue.sh)
  # Alone on the machine: the job's length is calibrated from the speed just before submitting.
  set_tests_properties(${test} PROPERTIES
    LABELS slurm TIMEOUT 300 SKIP_RETURN_CODE 77 PROCESSORS 2 RESOURCE_LOCK slurm
    ENVIRONMENT "${SLIMTRAIN_TEST_ENV};SLIMTRAIN_BIN=$<TARGET_FILE:slimtrain>;MPIEXEC=${MPIEXEC_EXECUTABLE};SLIMTRAIN_SOURCE_DIR=${PROJECT_SOURCE_DIR};SLURM_TEST_LAUNCHER=${launcher}")
endforeach()

# MAX_RESTARTS: kill -9 of a rank -> relaunch inside the allocation -> resume -> done; exit 2 is
# not restarted (about 60 s).
add_test(NAME e2e_slurm_restart COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/slurm_restart.sh)
set_tests_properties(e2e_slurm_restart PROPERTIES
  LABELS slurm TIMEOUT 400 SKIP_RETURN_CODE 77 PROCESSORS 2 RESOURCE_LOCK slurm
  ENVIRONMENT "${SLIMTRAIN_TEST_ENV};SLIMTRAIN_BIN=$<TARGET_FILE:slimtrain>;MPIEXEC=${MPIEXEC_EXECUTABLE};SLIMTRAIN_SOURCE_DIR=${PROJECT_SOURCE_DIR};SLURM_TEST_LAUNCHER=srun")
