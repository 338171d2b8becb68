"""e2e_hf_lora's checks against PEFT (the tests' venv): slimtrain's --lora next to PEFT's LoRA.

  count BASE TARGETS R            PEFT's trainable parameter count for that LoRA on BASE (SEQ_CLS;
                                  a ViT without a task type, its classifier in modules_to_save)
  peft BASE ADAPTER DATA PRED     PeftModel.from_pretrained(BASE, ADAPTER)'s logits on DATA's test
                                  sequences equal PRED's (slimtrain eval --predictions) within 1e-5
  kept BASE WEIGHTS NAME          tensor NAME of WEIGHTS (a checkpoint's export) equals BASE's: frozen
"""
import json
import sys

import numpy as np
import torch
from peft import LoraConfig, PeftModel, TaskType, get_peft_model
from safetensors.torch import load_file
from transformers import AutoModelForSequenceClassification, ViTForImageClassification
from transformers.utils import logging as hf_logging

import hf_compare
import hf_models


hf_logging.disable_progress_bar()


def is_vit(base):
    return json.load(open(f"{base}/config.json"))["model_type"] == "vit"


def base_model(base):
    if is_vit(base):
        return ViTForImageClassification.from_pretrained(base, dtype=torch.float32, num_labels=4)
    return AutoModelForSequenceClassification.from_pretrained(base, dtype=torch.float32, num_labels=4)


def count(base, targets, r):
    targets = targets if targets == "all-linear" else targets.split(",")
    # DistilBERT's head has two layers: slimtrain trains both in full, as PEFT does when told.
    extra = ["pre_classifier"] if json.load(open(f"{base}/config.json"))["model_type"] == "distilbert" else None
    task = TaskType.SEQ_CLS
    if is_vit(base):  # the head saved by name, as PEFT's image-classification guide does
        task, extra = None, ["classifier"]
    model = get_peft_model(base_model(base), LoraConfig(task_type=task, r=int(r),
                                                        lora_alpha=2 * int(r), target_modules=targets,
                                                        modules_to_save=extra))
    trainable, _ = model.get_nb_trainable_parameters()
    print("trainable", trainable)


def peft(base, adapter, data, pred):
    config = json.load(open(f"{adapter}/adapter_config.json"))
    assert config["peft_type"] == "LORA" and config["task_type"] == "SEQ_CLS", config
    model = PeftModel.from_pretrained(base_model(base), adapter).eval()
    with torch.no_grad():
        want = np.concatenate([model(input_ids=torch.tensor(s).unsqueeze(0)).logits.numpy()
                               for s in hf_models.sequences(data, "test")])
    hf_compare.against(want, pred, "sequences through PEFT", min_spread=0.02, tolerance=1e-5)


def kept(base, weights, name):
    a, b = load_file(f"{base}/model.safetensors")[name], load_file(weights)[name]
    assert torch.equal(a, b), f"{name} changed: the base was not frozen"
    print(f"{name} as in the base ({tuple(a.shape)})")


if __name__ == "__main__":
    {"count": count, "peft": peft, "kept": kept}[sys.argv[1]](*sys.argv[2:])
