# A tiny writer of real checkpoints for the e2e scripts (no MPI, no data file needed).
add_executable(ckpt_fixture ${CMAKE_CURRENT_SOURCE_DIR}/ckpt_fixture.cpp)
target_link_libraries(ckpt_fixture PRIVATE slimtrain_ckpt)
slimtrain_use_torch(ckpt_fixture)

slimtrain_add_e2e(NAME e2e_ckpt_export COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/ckpt_export.sh
  TIMEOUT 120 LABELS ckpt torch ENV CKPT_FIXTURE=$<TARGET_FILE:ckpt_fixture>)
# --best-metric loss keeps the lowest-loss evaluated checkpoint (accuracy the highest): a new best
# evaluation is checkpointed at its step, and the best survives --resume.
slimtrain_add_e2e(NAME e2e_ckpt_best COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/ckpt_best.sh
                  TIMEOUT 120 LABELS ckpt torch)
