class Program_weight_tensor_meta_in_0:
    name = 'in_0'
    original_name = 'in0'
    shape = [1, 1, 96, 1]
    dtype = 'torch.int64'
    device = 'cpu'
    mean = 501.417
    std = 290.729
    min_val = 0
    max_val = 999
    data = None
    kind = 'input'


class Program_weight_tensor_meta_in_1:
    name = 'in_1'
    original_name = 'in1'
    shape = [1, 1, 96, 1]
    dtype = 'torch.int64'
    device = 'cpu'
    mean = 477.49
    std = 301.82
    min_val = 0
    max_val = 999
    data = None
    kind = 'input'


class Program_weight_tensor_meta_in_2:
    name = 'in_2'
    original_name = 'in2'
    shape = []
    dtype = 'torch.bool'
    device = 'cpu'
    mean = 1.0
    std = 0.0
    min_val = 1
    max_val = 1
    data = None
    kind = 'input'


class Program_weight_tensor_meta_in_3:
    name = 'in_3'
    original_name = 'in3'
    shape = []
    dtype = 'torch.bool'
    device = 'cpu'
    mean = 1.0
    std = 0.0
    min_val = 1
    max_val = 1
    data = None
    kind = 'input'
