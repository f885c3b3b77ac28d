"""Fair evaluation of ReAct against Act-only, Standard, CoT, CoT-SC and the paper's hybrids.

On HotpotQA questions or FEVER claims (`fever_data`, `fever_metrics`, `fever_report`).
"""
