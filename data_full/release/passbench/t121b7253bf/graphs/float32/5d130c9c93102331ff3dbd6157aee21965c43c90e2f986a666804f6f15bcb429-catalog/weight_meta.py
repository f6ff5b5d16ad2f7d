class Program_weight_tensor_meta_in_0:
    name = 'in_0'
    original_name = 'in0'
    shape = [1, 1, 32, 1]
    dtype = 'torch.int64'
    device = 'cpu'
    mean = 495.938
    std = 309.032
    min_val = 0
    max_val = 999
    data = None
    kind = 'input'


class Program_weight_tensor_meta_in_1:
    name = 'in_1'
    original_name = 'in1'
    shape = []
    dtype = 'torch.bool'
    device = 'cpu'
    mean = 1.0
    std = 0.0
    min_val = 1
    max_val = 1
    data = None
    kind = 'input'
