class Program_weight_tensor_meta_in_0:
    name = 'in_0'
    original_name = 'in0'
    shape = []
    dtype = 'torch.int64'
    device = 'cpu'
    mean = 44.0
    std = 0.0
    min_val = 0
    max_val = 999
    data = None
    kind = 'input'


class Program_weight_tensor_meta_in_1:
    name = 'in_1'
    original_name = 'in1'
    shape = [1, 512]
    dtype = 'torch.int64'
    device = 'cpu'
    mean = 506.984
    std = 294.308
    min_val = 0
    max_val = 999
    data = None
    kind = 'input'
