class Program_weight_tensor_meta_in_0:
    name = 'in_0'
    original_name = 'in0'
    shape = [4, 12, 13, 25]
    dtype = 'torch.bfloat16'
    device = 'cpu'
    mean = 0.0
    std = 1.0
    min_val = None
    max_val = None
    data = None
    kind = 'input'


class Program_weight_tensor_meta_in_1:
    name = 'in_1'
    original_name = 'in1'
    shape = [13]
    dtype = 'torch.int64'
    device = 'cpu'
    mean = 0.307692
    std = 0.461538
    min_val = 0
    max_val = 1
    data = None
    kind = 'input'


class Program_weight_tensor_meta_in_2:
    name = 'in_2'
    original_name = 'in2'
    shape = [4, 12, 13, 13]
    dtype = 'torch.bfloat16'
    device = 'cpu'
    mean = 0.0
    std = 1.0
    min_val = None
    max_val = None
    data = None
    kind = 'input'
