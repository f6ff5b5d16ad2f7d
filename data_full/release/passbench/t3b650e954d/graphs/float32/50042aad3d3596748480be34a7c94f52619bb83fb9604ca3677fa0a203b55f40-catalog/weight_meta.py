class Program_weight_tensor_meta_in_0:
    name = 'in_0'
    original_name = 'in0'
    shape = [1, 12, 13, 25]
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
    shape = [13]
    dtype = 'torch.int64'
    device = 'cpu'
    mean = 0.461538
    std = 0.498519
    min_val = 0
    max_val = 1
    data = None
    kind = 'input'
