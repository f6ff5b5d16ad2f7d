class Program_weight_tensor_meta_in_0:
    name = 'in_0'
    original_name = 'in0'
    shape = [1, 128]
    dtype = 'torch.int32'
    device = 'cpu'
    mean = 477.844
    std = 293.923
    min_val = 0
    max_val = 999
    data = None
    kind = 'input'
