# export --embeddings: features recomputed by PyTorch from the exported weights (python3-torch).
slimtrain_add_e2e(NAME e2e_export_embeddings COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/export_embeddings.sh
                  TIMEOUT 180 LABELS ckpt torch)
