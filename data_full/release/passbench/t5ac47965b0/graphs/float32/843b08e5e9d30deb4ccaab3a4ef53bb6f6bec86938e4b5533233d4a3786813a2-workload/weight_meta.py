class Program_weight_tensor_meta_in_0:
    name = 'in_0'
    original_name = 'in0'
    shape = [8, 16]
    dtype = 'torch.int32'
    device = 'cpu'
    mean = 0.546875
    std = 0.497798
    min_val = 0
    max_val = 1
    data = None
    kind = 'input'
