#pragma once
/** @brief Everything the trainer needs from the checkpoint part, in one include. */
#include "slimtrain/ckpt/checkpoint_manager.hpp"
#include "slimtrain/ckpt/checkpoint_state.hpp"
#include "slimtrain/ckpt/retention.hpp"
#include "slimtrain/ckpt/torch_state.hpp"
#include "slimtrain/ckpt/verify.hpp"
