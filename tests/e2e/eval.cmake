# Evaluation at 20,000 classes at np 2 under a 3 GB address-space bound per rank: train's final
# evaluation and `slimtrain eval`, linear statistics, the sampled top confusions, the table's
# worst and best classes (about 20 s).
slimtrain_add_e2e(NAME e2e_eval_classes COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/eval_classes.sh
                  TIMEOUT 90 LABELS train)
