class Program_weight_tensor_meta_in_0:
    name = 'in_0'
    original_name = 'in0'
    shape = [8, 3, 224, 224]
    dtype = 'torch.float32'
    device = 'cpu'
    mean = -0.0020657258235017837
    std = 1.00038619566725
    min_val = -4.34328031539917
    max_val = 4.562695503234863
    data = None
    kind = 'input'


class Program_weight_tensor_meta_w_0:
    name = 'w_0'
    original_name = 'in1'
    shape = [96, 3, 4, 4]
    dtype = 'torch.float32'
    device = 'cpu'
    mean = -0.0013781809656039615
    std = 0.08286661249719018
    min_val = -0.14431455731391907
    max_val = 0.14429084956645966
    data = None
    kind = 'parameter'


class Program_weight_tensor_meta_w_1:
    name = 'w_1'
    original_name = 'in2'
    shape = [96]
    dtype = 'torch.float32'
    device = 'cpu'
    mean = -0.001023910140550773
    std = 0.08002174853539208
    min_val = -0.1425090730190277
    max_val = 0.13907383382320404
    data = None
    kind = 'parameter'
