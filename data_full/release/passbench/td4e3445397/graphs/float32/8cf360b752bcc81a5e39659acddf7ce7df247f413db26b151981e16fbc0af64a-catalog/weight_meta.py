class Program_weight_tensor_meta_in_0:
    name = 'in_0'
    original_name = 'in0'
    shape = [1, 32, 32]
    dtype = 'torch.complex64'
    device = 'cpu'
    mean = -0.00453948
    std = 0.706526
    min_val = None
    max_val = None
    data = None
    kind = 'input'
