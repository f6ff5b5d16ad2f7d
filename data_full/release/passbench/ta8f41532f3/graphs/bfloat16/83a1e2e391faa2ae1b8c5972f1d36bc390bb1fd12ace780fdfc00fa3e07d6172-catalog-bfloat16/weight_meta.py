class Program_weight_tensor_meta_in_0:
    name = 'in_0'
    original_name = 'in0'
    shape = [1, 32, 128]
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
    shape = [4, 128]
    dtype = 'torch.bfloat16'
    device = 'cpu'
    mean = 0.0
    std = 0.02
    min_val = None
    max_val = None
    data = None
    kind = 'parameter'


class Program_weight_tensor_meta_w_1:
    name = 'w_1'
    original_name = 'in2'
    shape = [4]
    dtype = 'torch.bfloat16'
    device = 'cpu'
    mean = 0.0
    std = 0.02
    min_val = None
    max_val = None
    data = None
    kind = 'parameter'
