# The 2.x build beside Debian's 1.13 (scripts/test.sh builds both): a 2.x-scripted module trains
# here and is refused there, checkpoints resume across the two, exports load in PyTorch 2.x
# (about 40 s). Only where this build's LibTorch is the venv's (TORCH=pip scripts/build.sh).
if(SLIMTRAIN_TORCH_PYTHON)
  set(SLIMTRAIN_INTEROP_BIN "${PROJECT_SOURCE_DIR}/build/apps/slimtrain" CACHE FILEPATH
      "The LibTorch 1.13 build's slimtrain that e2e_interop compares with")
  slimtrain_add_e2e(NAME e2e_interop COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/interop.sh TIMEOUT 300
                    LABELS torch
                    ENV SLIMTRAIN_INTEROP_BIN=${SLIMTRAIN_INTEROP_BIN}
                        SLIMTRAIN_TORCH_PYTHON=${SLIMTRAIN_TORCH_PYTHON})
  set_tests_properties(e2e_interop PROPERTIES PROCESSORS 2)
endif()
