class Program_weight_tensor_meta_in_0:
    name = 'in_0'
    original_name = 'in0'
    shape = [8, 8, 1, 64]
    dtype = 'torch.float32'
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
    shape = [8, 8, 35, 64]
    dtype = 'torch.float32'
    device = 'cpu'
    mean = 0.0
    std = 1.0
    min_val = None
    max_val = None
    data = None
    kind = 'input'


class Program_weight_tensor_meta_in_2:
    name = 'in_2'
    original_name = 'in2'
    shape = [8, 8, 35, 64]
    dtype = 'torch.float32'
    device = 'cpu'
    mean = 0.0
    std = 1.0
    min_val = None
    max_val = None
    data = None
    kind = 'input'


class Program_weight_tensor_meta_in_3:
    name = 'in_3'
    original_name = 'in3'
    shape = [8, 1, 1, 35]
    dtype = 'torch.float32'
    device = 'cpu'
    mean = 0.0
    std = 1.0
    min_val = None
    max_val = None
    data = None
    kind = 'input'
