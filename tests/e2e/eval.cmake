# Evaluation at 20,000 classes at np 2 under a 3 GB address-space bound per rank: train's final
# evaluation and `slimtrain eval`, linear statistics, the sampled top confusions, the table's
# worst and best classes; a model of 100,000 classes evaluated under 1 GB per rank (about 40 s).
slimtrain_add_e2e(NAME e2e_eval_classes COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/eval_classes.sh
                  TIMEOUT 150 LABELS train)
