"""Selection wing: long-tail labels and rule (``longtail``), tasks and standalone task folders
(``tasks``; ``task_runner`` is shipped into each folder as ``run_task.py``), plots
(``python -m curate curate``)."""
