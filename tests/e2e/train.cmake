# Faults injected into 2-rank training jobs: late eval rank -> eval_skipped everywhere, training
# and checkpoints go on; retry recovers a one-off delay; a hung rank ends the job within the
# collective deadline naming it (also one hung in eval); a dead rank ends it promptly (~40 s).
slimtrain_add_e2e(NAME e2e_train_faults COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/train_faults.sh
                  TIMEOUT 180 LABELS train)
# Bad train/eval options exit 2 naming them with no run directory left; slimtrain eval of the
# final checkpoint at np 1, 2, 3 equals the trainer's final test evaluation (about 30 s).
slimtrain_add_e2e(NAME e2e_train_cli_eval COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/train_cli_eval.sh
                  TIMEOUT 180 LABELS train)
