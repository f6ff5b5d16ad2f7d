class Program_weight_tensor_meta_in_0:
    name = 'in_0'
    original_name = 'in0'
    shape = [1, 1280, 96, 96]
    dtype = 'torch.bfloat16'
    device = 'cpu'
    mean = 0.0
    std = 1.0
    min_val = None
    max_val = None
    data = None
    kind = 'input'


class Program_weight_tensor_meta_w_0:
    name = 'w_0'
    original_name = 'in1'
    shape = [1280, 1, 3, 3]
    dtype = 'torch.bfloat16'
    device = 'cpu'
    mean = -0.005138820254388873
    std = 0.47484607088568287
    min_val = -1.9858875274658203
    max_val = 2.146451950073242
    data = None
    kind = 'parameter'


class Program_weight_tensor_meta_w_1:
    name = 'w_1'
    original_name = 'in2'
    shape = [1280]
    dtype = 'torch.bfloat16'
    device = 'cpu'
    mean = 0.0
    std = 0.0
    min_val = 0.0
    max_val = 0.0
    data = None
    kind = 'parameter'
